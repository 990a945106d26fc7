"""Reflection memory end to end: real workers, sandbox, PostgreSQL memory, separate runs.

- The same out-of-memory task type in four runs: the first learns the fix by diagnosis
  (halving twice), the next two take the proven fix from memory at once, the third
  occurrence promotes a semantic rule, and the fourth run plans the smaller batch from the
  start with no retry.
- A job spec that succeeds cleanly twice is cached as a procedural template and becomes the
  job of a later task of the same type that has none.
- With the reflection pool stopped, runs still complete, without patches, and record the miss.

Memory learns after a task ends (the learner takes the outcome off the task's path), so each
run here waits for the learner before the next starts, as a study does between cycles.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.learning.settle import wait_learned
from activities.memory.store import MemoryStore
from client.assay import AssayClient
from tests.support.e2e import ROOT, isolated_settings, report_of
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import build_policy, queues_from
from workers.pools.builders import SERVED_POOLS, run_pools
from workers.settings import Settings
from workflows.contracts.pools import Pool
from workflows.contracts.results import RunReport

pytestmark = pytest.mark.integration
DATA = ROOT / "tests" / "data" / "memory"


class Stack:
    """Workers for some pools, and a way to run a plan file on them."""

    def __init__(self, env: WorkflowEnvironment, settings: Settings, database_url: str,
                 pools: Sequence[Pool]) -> None:
        self.env, self.settings, self.database_url = env, settings, database_url
        self.pools = list(pools)

    async def run(self, plan: str, **policy: object) -> RunReport:
        """Run a plan file; its report (every task's detail)."""
        settings = self.settings
        req = load_plan(DATA / plan, max_bytes=settings.max_plan_bytes,
                        policy=build_policy(settings).model_copy(update=policy),
                        queues=queues_from(settings))
        client = AssayClient(self.env.client, task_queue=settings.queue_orchestration)
        run_id = await client.start_run(req, again=True)
        report = report_of(await asyncio.wait_for(client.result(run_id), timeout=120))
        if Pool.REFLECTION in self.pools:
            keys = [f"{run_id}/{t.task_id}" for t in report.tasks]
            assert await wait_learned(self.env.client, settings.queue(Pool.SKILLS), keys) == []
        return report

    async def rules(self) -> list[str]:
        """The ids of memory's semantic rules."""
        async with MemoryStore(self.database_url) as store:
            rules, _ = await store.rules()
        return [r.rule_id for r in rules]


async def serve(env: WorkflowEnvironment, settings: Settings, database_url: str,
                pools: Sequence[Pool]) -> AsyncIterator[Stack]:
    stop = asyncio.Event()
    running = asyncio.create_task(run_pools(settings, list(pools), database_url=database_url,
                                            stop=stop, client=env.client))
    yield Stack(env, settings, database_url, pools)
    stop.set()
    await running


@pytest.fixture
async def stack(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                task_queue: str) -> AsyncIterator[Stack]:
    settings = isolated_settings(tmp_path / "assay", task_queue)
    async for served in serve(dev_env, settings, fresh_database_url, list(SERVED_POOLS)):
        yield served


def execution_attempts(result: RunReport) -> int:
    (task,) = result.tasks
    assert task.status == "completed", task.status_reason
    return task.provenance.execution.attempts


async def test_an_oom_fix_is_learned_promoted_and_planned_from_the_start(stack: Stack) -> None:
    first = await stack.run("train.json")
    task = first.tasks[0]
    assert execution_attempts(first) == 3  # 64 -> 32 -> 16 by the rule table's halving
    assert [n.source for n in task.reflections] == ["rule_table", "rule_table"]
    assert task.metrics["batch_size"] == 16
    assert task.learned is None  # learned off the task's path: memory has it, not the result
    assert task.skill_report is not None and task.skill_report.reported
    async with MemoryStore(stack.database_url) as store:
        episodes = [e for e in await store.episodes() if e.run_id == first.run_id]
    assert len(episodes) == 3

    second = await stack.run("train.json")
    (note,) = second.tasks[0].reflections
    assert execution_attempts(second) == 2  # memory's proven fix goes straight to 16
    assert note.source == "episodic" and note.patch is not None
    assert note.patch.from_semantic_memory and note.decision == "retry"
    assert note.confidence == 1.0  # known + proven + minimal patch, clamped
    assert [c.new_value for c in note.patch.changes] == [16]
    assert any(p.kind == "frequency" and p.key == "out_of_memory" for p in note.patterns)
    assert await stack.rules() == []

    third = await stack.run("train.json")
    assert execution_attempts(third) == 2
    (rule_id,) = await stack.rules()  # promoted by the third task with this root cause

    fourth = await stack.run("train.json")
    task = fourth.tasks[0]
    assert execution_attempts(fourth) == 1
    assert task.reflections == [] and task.provenance.patches == []
    assert task.provenance.memory_rules == [rule_id]
    assert task.metrics["batch_size"] == 16
    assert fourth.plan is not None
    assert f"applied rule {rule_id}" in (fourth.plan.decisions[0].rationale or "")
    assert fourth.reflection.rules_applied == [rule_id]

    async with MemoryStore(stack.database_url) as store:
        rule = await store.rule(rule_id)
        await store.verify_ledger()
    assert rule is not None
    assert (rule.root_cause, rule.occurrences) == ("out_of_memory", 3)
    assert rule.recommendation.parameters == {"args.batch_size": 16}
    assert rule.recommendation.limits == {"args.batch_size": "max"}
    assert (rule.success_count, rule.failure_count) == (4, 0)  # three fixes, one clean use

    off = await stack.run("train.json", memory=build_policy(stack.settings,
                                                            memory=False).memory)
    task = off.tasks[0]
    assert execution_attempts(off) == 3  # memory off: neither rules nor proven fixes
    assert [n.source for n in task.reflections] == ["rule_table", "rule_table"]
    assert task.learned is None and task.provenance.memory_rules == []


async def test_a_twice_clean_job_becomes_the_template_of_a_jobless_task(stack: Stack) -> None:
    first = await stack.run("describe.json")
    assert first.tasks[0].status == "completed"
    async with MemoryStore(stack.database_url) as store:
        assert await store.templates() == []  # no template after one clean run
    await stack.run("describe.json")
    async with MemoryStore(stack.database_url) as store:
        (cached,) = await store.templates()  # the job's kind keys it
    template_id = cached.template_id

    third = await stack.run("describe_jobless.json")
    task = third.tasks[0]
    assert task.status == "completed", task.status_reason
    assert task.provenance.template_id == template_id
    assert task.provenance.job_author == f"template:{template_id}"
    assert task.metrics["n"] == 5
    assert third.reflection.templates_used == [template_id]
    assert task.model.calls == 0  # no coder was asked

    without = await stack.run("describe_jobless.json", memory=build_policy(
        stack.settings, memory=False).memory)
    assert without.tasks[0].status == "deferred"  # memory off: no job, no model
    async with MemoryStore(stack.database_url) as store:
        (template,) = await store.templates()  # the only job: its kind keys it
    # two clean runs of the plan's job, then one clean run of the template itself
    assert (template.clean_successes, template.uses, template.successes) == (3, 1, 1)


@pytest.fixture
async def no_reflection(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                        task_queue: str) -> AsyncIterator[Stack]:
    settings = isolated_settings(tmp_path / "assay", task_queue)
    pools = [p for p in SERVED_POOLS if p is not Pool.REFLECTION]
    async for served in serve(dev_env, settings, fresh_database_url, pools):
        yield served


async def test_with_the_reflection_pool_stopped_runs_complete_and_record_the_miss(
        no_reflection: Stack) -> None:
    clean = await no_reflection.run("describe.json", reflection_timeout_s=1.0)
    assert clean.status == "completed"
    assert clean.tasks[0].learned is None
    assert clean.reflection.misses == 1  # memory at intake; the outcome waits at the learner

    failing = await no_reflection.run("train.json", reflection_timeout_s=1.0)
    task = failing.tasks[0]
    assert task.status == "failed"
    assert "reflection was unavailable" in task.status_reason
    assert task.provenance.patches == [] and task.provenance.execution.attempts == 1
    assert failing.reflection.misses == 2
