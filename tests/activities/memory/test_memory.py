"""Memory activities on real PostgreSQL, and reflection with what memory remembers.

``remember_task`` learns from finished tasks (rules at the third task, templates at the second
clean success, validation and demotion); ``consult_memory`` applies what was learned to a new
plan and says what it could not use; reflection prefers a proven fix and answers alone when
memory is down.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from temporalio.testing import ActivityEnvironment

from activities.memory.memory import Memory, rule_id_for
from activities.memory.store import MemoryStore, MemoryStoreUnavailable, job_checksum, template_id
from activities.reflection.reflection import MemoryView, Reflection, diagnose
from workflows.contracts.execution import ExecutionOutcome
from workflows.contracts.kinds import task_kind
from workflows.contracts.memory import (
    AttemptRecord,
    ConsultAnswer,
    ConsultInput,
    ConsultTask,
    Episode,
    Limit,
    MemoryRule,
    Recommendation,
    RememberAnswer,
    RememberInput,
    RememberTasksInput,
    rule_confidence,
)
from workflows.contracts.plan import JobSpec, Scalar
from workflows.contracts.reflection import DiagnoseInput, PatchChange

db = pytest.mark.integration
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ACTION = "Train the classifier on the full data set"
KIND = task_kind(ACTION)
"""``classification:-|-|-``: the action names the family, the job (``print``) no analysis."""
CSV_KIND = task_kind(ACTION, None, ["data.csv"])
"""The same work on a CSV file: ``classification:-|csv|-``."""
OOM_RULE = rule_id_for(KIND, "out_of_memory")
BATCH = "args.batch_size"
SRC = "print('fit')"


def train_job(batch: int | None = 64, **args: Scalar) -> JobSpec:
    return JobSpec(code=SRC, source=SRC, filename="job.py",
                   args=dict(args) if batch is None else {"batch_size": batch, **args})


def halving(old: int, new: int, attempt: int = 1) -> AttemptRecord:
    return AttemptRecord(phase="execution", attempt=attempt, root_cause="out_of_memory",
                         note_id=f"ref-{attempt}", patch_id=f"patch-{attempt}",
                         patch_source="rule_table",
                         changes=[PatchChange(field=BATCH, old_value=old, new_value=new)],
                         patch_outcome="applied")


def fixed(run: str, *, minute: int = 0, rules_applied: Sequence[str] = (),
          failures: Sequence[AttemptRecord] | None = None) -> RememberInput:
    """A task that ran out of memory, was patched by reflection and then completed."""
    tried = [halving(64, 32)] if failures is None else list(failures)
    return RememberInput(run_id=run, task_id="t1", action=ACTION, status="completed",
                         finished_at=T0 + timedelta(minutes=minute), first_job=train_job(64),
                         final_job=train_job(tried[-1].changes[0].new_value), failures=tried,
                         attempts=len(tried) + 1, environment="env-a",
                         rules_applied=list(rules_applied))


def clean(run: str, *, minute: int = 0, job: JobSpec | None = None,
          input_names: Sequence[str] = (), rules_applied: Sequence[str] = ()) -> RememberInput:
    """A task that completed at its first attempt."""
    return RememberInput(run_id=run, task_id="t1", action=ACTION, status="completed",
                         finished_at=T0 + timedelta(minutes=minute), first_job=job,
                         final_job=job or train_job(32), attempts=1,
                         input_names=list(input_names), rules_applied=list(rules_applied))


def consult(*tasks: ConsultTask, **options: Any) -> ConsultInput:
    return ConsultInput(run_id="run-new", tasks=list(tasks), **options)


def task(task_id: str = "t1", job: JobSpec | None = None,
         input_names: Sequence[str] = ()) -> ConsultTask:
    return ConsultTask(task_id=task_id, action=ACTION, job=job, input_names=list(input_names))


@pytest.fixture
async def store(fresh_database_url: str) -> AsyncIterator[MemoryStore]:
    async with MemoryStore(fresh_database_url) as opened:
        yield opened


@pytest.fixture
def memory(store: MemoryStore) -> Memory:
    return Memory(store)


async def sql(store: MemoryStore, statement: str) -> None:
    async with store.engine.begin() as conn:
        await conn.execute(text(statement))


async def promote(memory: Memory) -> str:
    """Three tasks fixed the same way: the out-of-memory rule is promoted."""
    for n in (1, 2, 3):
        await memory.remember_task(fixed(f"run-{n}", minute=n))
    assert memory.store is not None and await memory.store.rule(OOM_RULE) is not None
    return OOM_RULE


# --- remember_task: rules ------------------------------------------------------------------


@db
async def test_a_pattern_becomes_a_rule_at_its_third_distinct_task(memory: Memory,
                                                                   store: MemoryStore) -> None:
    first = await memory.remember_task(fixed("run-1", minute=1))
    assert (first.task_type, first.episodes, first.rules_promoted) == (KIND, 2, [])
    twice = fixed("run-2", minute=2, failures=[halving(64, 32), halving(32, 16, attempt=2)])
    assert (await memory.remember_task(twice)).rules_promoted == []
    assert (await memory.remember_task(twice)).rules_promoted == [], "a retry is no new task"
    assert await store.rules(KIND) == ([], [])

    third = await memory.remember_task(fixed("run-3", minute=3))
    assert third.rules_promoted == [OOM_RULE]
    rule = await store.rule(OOM_RULE)
    assert rule is not None
    assert (rule.root_cause, rule.occurrences, rule.success_count, rule.failure_count) == (
        "out_of_memory", 3, 3, 0)
    assert rule.confidence == rule_confidence(3, 0) == 0.8
    assert rule.recommendation.parameters == {BATCH: 32}  # the newest fix
    assert rule.recommendation.limits == {BATCH: "max"}

    fourth = await memory.remember_task(fixed("run-4", minute=4))
    assert fourth.rules_promoted == []
    rules, _ = await store.rules(KIND)
    assert [(r.rule_id, r.occurrences) for r in rules] == [(OOM_RULE, 4)]
    promoted = [r for r in await store.ledger() if r["body"].get("event") == "promoted"]
    assert [r["entry_id"] for r in promoted] == [f"rule/{OOM_RULE}/promoted"]


class RefusingOnce(MemoryStore):
    """A store that refuses one run's episodes the first time it is asked to record them."""

    def __init__(self, database_url: str, refuse: str) -> None:
        super().__init__(database_url)
        self.refuse = refuse

    async def record_episodes(self, episodes: Sequence[Episode]) -> int:
        if episodes and episodes[0].run_id == self.refuse:
            self.refuse = ""
            raise MemoryStoreUnavailable("the store went away for this task")
        return await super().record_episodes(episodes)


class CountingPrunes(MemoryStore):
    """A store that counts the prunes it is asked for, by task type."""

    def __init__(self, database_url: str) -> None:
        super().__init__(database_url)
        self.prunes: list[str | None] = []

    async def prune(self, now: datetime, *, keep: int = 100, max_age_days: float = 30,
                    task_type: str | None = None) -> int:
        self.prunes.append(task_type)
        return await super().prune(now, keep=keep, max_age_days=max_age_days,
                                   task_type=task_type)


@db
async def test_a_batch_is_learned_from_in_order_and_a_failing_task_stops_only_itself(
        fresh_database_url: str) -> None:
    async with RefusingOnce(fresh_database_url, refuse="run-2") as store:
        memory = Memory(store)
        batch = RememberTasksInput(tasks=[fixed(f"run-{n}", minute=n) for n in (1, 2, 3)])
        env = ActivityEnvironment()
        with pytest.raises(MemoryStoreUnavailable):
            await env.run(memory.remember_tasks, batch)
        assert await store.rules(KIND) == ([], [])  # run-1 and run-3 learned: two tasks
        retried = await env.run(memory.remember_tasks, batch)  # the activity's retry
        assert [a.episodes for a in retried.answers] == [0, 2, 0]  # the others count once
        assert [a.rules_promoted for a in retried.answers] == [[], [OOM_RULE], []]
        rule = await store.rule(OOM_RULE)
        assert rule is not None and rule.occurrences == 3


@db
async def test_a_batch_prunes_each_task_type_once_and_keeps_what_one_by_one_keeps(
        fresh_database_url: str) -> None:
    tasks = [clean(f"run-{n}", minute=n) for n in range(1, 6)]
    tasks.insert(2, clean("run-csv", minute=3, input_names=["data.csv"]))
    async with CountingPrunes(fresh_database_url) as one_by_one:
        singly = Memory(one_by_one, keep=2)
        for task in tasks:
            await ActivityEnvironment().run(singly.remember_task, task)
        kept = {e.episode_id for e in await one_by_one.episodes(KIND)}
        assert len(one_by_one.prunes) == len(tasks)
        await sql(one_by_one, "DELETE FROM memory_episodes")
    async with CountingPrunes(fresh_database_url) as batched:
        answers = (await ActivityEnvironment().run(
            Memory(batched, keep=2).remember_tasks, RememberTasksInput(tasks=tasks))).answers
        assert sorted(batched.prunes, key=str) == sorted([KIND, CSV_KIND], key=str)
        assert {e.episode_id for e in await batched.episodes(KIND)} == kept
        assert [a.pruned for a in answers if a.task_type == KIND] == [0, 0, 0, 0, 3]
        assert [a.pruned for a in answers if a.task_type == CSV_KIND] == [0]


@db
async def test_a_rules_validation_counts_once_when_remember_is_retried(
        memory: Memory, store: MemoryStore) -> None:
    rule_id = await promote(memory)
    used = clean("run-4", minute=4, rules_applied=[rule_id])
    first = await memory.remember_task(used)
    assert (first.episodes, first.rules_validated) == (1, [rule_id])
    retried = await memory.remember_task(used)
    assert (retried.episodes, retried.rules_validated) == (0, [])
    rule = await store.rule(rule_id)
    assert rule is not None
    assert (rule.success_count, rule.failure_count) == (4, 0)
    assert rule.confidence == rule_confidence(4, 0)


@db
async def test_a_rule_whose_cause_keeps_recurring_is_demoted_and_no_longer_applied(
        memory: Memory, store: MemoryStore) -> None:
    rule_id = await promote(memory)
    demoted: list[list[str]] = []
    for n in (4, 5, 6, 7):  # the rule was applied, and the task still ran out of memory
        answer = await memory.remember_task(fixed(f"run-{n}", minute=n,
                                                  rules_applied=[rule_id]))
        assert answer.rules_validated == [rule_id]
        demoted.append(answer.rules_demoted)
    # 3 successes, then failures: 0.67, 0.57, 0.50 (not below), 0.44 (below 0.5)
    assert demoted == [[], [], [], [rule_id]]
    rule = await store.rule(rule_id)
    assert rule is not None
    assert (rule.status, rule.success_count, rule.failure_count) == ("demoted", 3, 4)

    answer = await memory.consult_memory(consult(task(job=train_job(64)), min_confidence=0.0))
    (advice,) = answer.advice
    assert advice.job is None and advice.rules == []
    assert f"rule {rule_id} is demoted" in advice.skipped
    assert any(r["entry_id"] == f"rule/{rule_id}/demoted/run-7/t1"
               for r in await store.ledger())


@db
async def test_a_rule_changed_outside_assay_stays_out_of_use_until_a_person_resaves_it(
        memory: Memory, store: MemoryStore) -> None:
    rule_id = await promote(memory)
    await sql(store, """UPDATE memory_rules SET body = jsonb_set(body,
              '{recommendation,parameters,args.batch_size}', '8')""")
    answer = await memory.remember_task(fixed("run-4", minute=4))
    assert answer.rules_promoted == []
    rules, warnings = await store.rules(KIND)
    assert rules == []
    assert [w.split(" (")[0] for w in warnings] == [f"rule {rule_id} was changed outside Assay"]


# --- remember_task: templates --------------------------------------------------------------


@db
async def test_a_job_is_cached_as_a_template_at_its_second_clean_success_only(
        memory: Memory, store: MemoryStore) -> None:
    job = train_job(32)
    tid = template_id(CSV_KIND, job_checksum(job))
    first = clean("run-1", minute=1, job=job, input_names=["data.csv"])
    assert (await memory.remember_task(first)).templates_cached == []
    assert (await memory.remember_task(first)).templates_cached == [], "a retry counts once"
    assert (await memory.remember_task(fixed("run-2", minute=2))).templates_cached == []
    second = await memory.remember_task(clean("run-3", minute=3, job=job,
                                              input_names=["data.csv"]))
    assert second.templates_cached == [tid]
    other_data = await memory.remember_task(clean("run-5", minute=5, job=job))
    assert other_data.templates_cached == [], "the same job on no data file is another kind"
    third = await memory.remember_task(clean("run-4", minute=4, job=job,
                                             input_names=["data.csv"]))
    assert third.templates_cached == []
    (template,) = await store.templates(CSV_KIND)
    assert (template.template_id, template.clean_successes) == (tid, 3)
    assert template.input_names == ["data.csv"]


@db
async def test_under_person_promotions_wait_as_candidates_until_approved(
        memory: Memory, store: MemoryStore) -> None:
    for n in (1, 2):
        await memory.remember_task(fixed(f"run-{n}", minute=n).model_copy(
            update={"promotion": "person"}))
    third = await memory.remember_task(fixed("run-3", minute=3).model_copy(
        update={"promotion": "person"}))
    assert third.rules_promoted == [] and third.candidates == [OOM_RULE]
    rule = await store.rule(OOM_RULE)
    assert rule is not None and rule.status == "candidate"
    applied = await memory.consult_memory(consult(task(job=train_job(64))))
    assert applied.advice[0].rules == []  # a candidate is never applied
    await store.set_rule_status(OOM_RULE, "active", "reviewer")
    applied = await memory.consult_memory(consult(task(job=train_job(64))))
    assert [u.rule_id for u in applied.advice[0].rules] == [OOM_RULE]

    job = train_job(32)
    tid = template_id(KIND, job_checksum(job))
    for n in (4, 5):
        answer = await memory.remember_task(clean(f"run-{n}", minute=n, job=job).model_copy(
            update={"promotion": "person"}))
    assert answer.templates_cached == [] and answer.candidates == [tid]
    assert await store.templates(KIND) == []
    approved = await store.approve_template(tid)
    assert approved is not None and approved.cached
    assert [t.template_id for t in await store.templates(KIND)] == [tid]
    assert await store.approve_template("tpl-unknown") is None


# --- consult_memory ------------------------------------------------------------------------


@db
async def test_a_confident_rule_is_applied_and_named_in_the_rationale(memory: Memory) -> None:
    rule_id = await promote(memory)
    answer = await memory.consult_memory(consult(task(job=train_job(64, seed=7))))
    assert answer.warnings == []
    (advice,) = answer.advice
    assert advice.task_type == KIND
    assert advice.job is not None and advice.job.args == {"batch_size": 32, "seed": 7}
    assert [u.rule_id for u in advice.rules] == [rule_id]
    assert advice.rationale() == (f"memory: applied rule {rule_id} (out_of_memory: "
                                  "args.batch_size 64 -> 32; confidence 0.80)")

    off = await memory.consult_memory(consult(task(job=train_job(64)), apply_rules=False))
    assert off.advice[0].job is None and off.advice[0].rationale() == ""
    bold = await memory.consult_memory(consult(task(job=train_job(64)), min_confidence=0.85))
    assert bold.advice[0].job is None
    assert bold.advice[0].skipped == [f"rule {rule_id} has confidence 0.80, below 0.85"]


def stored_rule(rule_id: str, root_cause: str, field: str, value: Scalar,
                limit: Limit) -> MemoryRule:
    return MemoryRule(rule_id=rule_id, task_type=KIND, root_cause=root_cause,
                      pattern=f"{KIND}: {root_cause}", observation="seen in 3 tasks",
                      recommendation=Recommendation(action=f"avoid {root_cause}",
                                                    parameters={field: value},
                                                    limits={field: limit}),
                      occurrences=3, success_count=3, confidence=0.9, created_at=T0)


@db
async def test_unreadable_and_tampered_rules_are_warnings_and_never_applied(
        memory: Memory, store: MemoryStore) -> None:
    await store.save_rule(stored_rule("r-oom", "out_of_memory", BATCH, 16, "max"))
    await store.save_rule(stored_rule("r-slow", "timeout", "resources.timeout_s", 1200, "min"))
    await store.save_rule(stored_rule("r-fit", "acceptance_not_met", "args.epochs", 20, "min"))
    await sql(store, "UPDATE memory_rules SET body = body - 'recommendation' "
                     "WHERE rule_id = 'r-oom'")
    await sql(store, """UPDATE memory_rules SET body = jsonb_set(body,
              '{recommendation,parameters,resources.timeout_s}', '3600')
              WHERE rule_id = 'r-slow'""")

    job = train_job(64, epochs=10)
    answer = await memory.consult_memory(consult(task("t1", job), task("t2", job)))
    assert len(answer.warnings) == 2, "each problem is reported once per consultation"
    unreadable, tampered = sorted(answer.warnings)
    assert unreadable.startswith("rule r-oom is unreadable: recommendation: Field required")
    assert tampered.startswith("rule r-slow was changed outside Assay (checksum mismatch)")
    for advice in answer.advice:
        assert [u.rule_id for u in advice.rules] == ["r-fit"]
        assert advice.job is not None
        assert advice.job.args == {"batch_size": 64, "epochs": 20}
        assert advice.job.resources.timeout_s == 600


@db
async def test_a_rule_whose_argument_the_job_lacks_is_skipped(memory: Memory) -> None:
    rule_id = await promote(memory)
    answer = await memory.consult_memory(consult(task(job=train_job(None, chunk_size=100))))
    (advice,) = answer.advice
    assert advice.job is None and advice.rules == []
    assert advice.skipped == [f"rule {rule_id} no longer applies: the job has no "
                              "args.batch_size"]


@db
async def test_a_template_stands_in_only_for_a_jobless_task_with_its_inputs(
        memory: Memory) -> None:
    job = train_job(32)
    for n in (1, 2):
        await memory.remember_task(clean(f"run-{n}", minute=n, job=job,
                                         input_names=["data.csv"]))
    tid = template_id(CSV_KIND, job_checksum(job))

    answer = await memory.consult_memory(consult(
        task("has", input_names=["data.csv", "extra.csv"]), task("lacks", input_names=[]),
        task("own", job=train_job(8), input_names=["data.csv"])))
    has, lacks, own = answer.advice
    assert (has.template_id, has.job) == (tid, job)
    assert has.rationale() == f"memory: job from procedural template {tid}"
    assert (lacks.template_id, lacks.job) == (None, None)
    assert lacks.skipped == [f"template {tid} needs inputs the task lacks: data.csv"]
    assert (own.template_id, own.job) == (None, None)

    off = await memory.consult_memory(consult(task("has", input_names=["data.csv"]),
                                              use_templates=False))
    assert off.advice[0].template_id is None and off.advice[0].job is None


# --- at scale, and switched off ------------------------------------------------------------


def oom(job: JobSpec, *, attempt: int = 1, run: str = "run-new") -> DiagnoseInput:
    return DiagnoseInput(run_id=run, task_id="t1", kind="execution", attempt=attempt, job=job,
                         outcome=ExecutionOutcome(outcome="out_of_memory",
                                                  reason="killed at the 1024 MiB memory limit",
                                                  peak_memory_mb=1024),
                         action=ACTION)


@db
async def test_twenty_thousand_episodes_of_one_type_still_get_answers_and_are_pruned(
        store: MemoryStore) -> None:
    assert await store.record_episodes([
        Episode(episode_id=f"old-{i}", recorded_at=T0 - timedelta(seconds=i), run_id="old",
                task_id=f"task-{i}", task_type=KIND, phase="execution", attempt=1,
                root_cause="out_of_memory", outcome="fixed", fix={BATCH: 16},
                changes=[PatchChange(field=BATCH, old_value=64, new_value=16)])
        for i in range(20_000)]) == 20_000
    memory = Memory(store, keep=100)

    advice = await memory.consult_memory(consult(task(job=train_job(64))))
    assert [a.task_id for a in advice.advice] == ["t1"]
    note = await Reflection(store, None, budget_s=60).diagnose_failure(oom(train_job(64)))
    assert (note.source, note.memory_ref) == ("episodic", "old-0")
    assert note.patched_job is not None and note.patched_job.args == {"batch_size": 16}

    answer = await memory.remember_task(fixed("run-new", minute=60))
    assert answer.rules_promoted == [OOM_RULE]
    assert answer.pruned == 20_002 - 100  # its failed attempt and its success were added
    assert len(await store.episodes(KIND, limit=1000)) == 100


async def test_memory_switched_off_answers_with_a_warning_and_learns_nothing() -> None:
    memory = Memory(None)
    assert await memory.consult_memory(consult(task(job=train_job()))) == ConsultAnswer(
        warnings=["memory is switched off on this worker"])
    assert await memory.remember_task(fixed("run-1")) == RememberAnswer(task_type=KIND)


# --- reflection with memory ----------------------------------------------------------------


def test_a_proven_fix_from_an_episode_replaces_the_rule_tables_patch_with_more_confidence(
        ) -> None:
    req = oom(train_job(64), attempt=3)  # the third attempt keeps both scores below 1
    alone = diagnose(req)
    view = MemoryView(fix=[PatchChange(field=BATCH, old_value=64, new_value=16)],
                      source="episodic", ref="ep-1")
    remembered = diagnose(req, view)
    assert alone.patch is not None and remembered.patch is not None
    assert [c.new_value for c in alone.patch.changes] == [32]
    assert [c.new_value for c in remembered.patch.changes] == [16]
    assert (remembered.source, remembered.memory_ref) == ("episodic", "ep-1")
    assert remembered.patch.from_semantic_memory and not alone.patch.from_semantic_memory
    assert remembered.confidence == pytest.approx(alone.confidence + 0.20)
    assert remembered.patch.risk < alone.patch.risk
    assert "memory: episode ep-1 fixed out_of_memory for this task type" in remembered.evidence


def test_a_memory_fix_breaking_the_guardrails_leaves_no_patch() -> None:
    req = oom(train_job(64))
    view = MemoryView(fix=[PatchChange(field="resources.memory_mb", old_value=1024,
                                       new_value=4096)],
                      source="semantic_rule", ref="sem-1")
    note = diagnose(req, view)
    assert note.patch is None and note.patched_job is None
    assert (note.source, note.memory_ref, note.decision) == ("none", "", "defer")
    assert any(e.startswith("guardrail: the patch raises resources.memory_mb from 1024 to "
                            "4096") for e in note.evidence)
    assert "patch dropped" in note.reason


@db
async def test_reflection_prefers_a_semantic_rule_and_writes_the_ledger(
        memory: Memory, store: MemoryStore) -> None:
    rule_id = await promote(memory)
    note = await Reflection(store, None, budget_s=60).diagnose_failure(oom(train_job(64)))
    assert (note.source, note.memory_ref) == ("semantic_rule", rule_id)
    assert note.patch is not None and note.patch.from_semantic_memory
    assert [c.new_value for c in note.patch.changes] == [32]
    assert any(p.kind == "frequency" and p.key == "out_of_memory" for p in note.patterns)
    entries = {r["entry_id"] for r in await store.ledger("run-new")}
    assert entries == {f"note/{note.note_id}", f"patch/{note.patch.patch_id}"}


async def test_reflection_answers_alone_when_the_memory_database_is_unreachable(
        tmp_path: Path) -> None:
    store = MemoryStore(f"postgresql+asyncpg://postgres@/assay?host={tmp_path / 'nowhere'}")
    with pytest.raises(MemoryStoreUnavailable):
        await store.open()  # the store stays usable as an object whose database is down
    req = oom(train_job(64))
    try:
        note = await asyncio.wait_for(
            Reflection(store, store.engine, budget_s=1).diagnose_failure(req), timeout=30)
    finally:
        await store.close()
    alone = diagnose(req)
    assert (note.root_cause, note.source, note.memory_ref) == ("out_of_memory", "rule_table", "")
    assert note.patch == alone.patch and note.confidence == alone.confidence
    assert ("memory unavailable (FileNotFoundError): the rule table answered alone"
            in note.evidence)
