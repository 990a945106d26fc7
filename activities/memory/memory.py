"""Reflection memory activities (reflection pool): consult memory at intake, remember tasks.

``consult_memory`` answers, for each task of a new plan, which semantic rules to apply to its
job and which procedural template can stand in for a missing job. ``remember_task`` records
a finished task's attempts as episodes (R5), promotes a pattern seen in three tasks to a rule,
validates and demotes the rules the task used, caches a job spec after two clean successes
(R6), appends patch outcomes to the memory ledger and prunes old episodes.

Both key on the task's kind (:func:`workflows.contracts.kinds.task_kind`, from its job); a
task with no job yet takes a template whose kind its own covers (:func:`usable_template`).

Both are bounded by the workflow's reflection timeout: a slow or absent memory means a task
goes on without advice, and the miss is recorded.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime

from temporalio import activity

from activities.memory.index import TaskTypeIndex
from activities.memory.promotion import promoted_status
from activities.memory.rules import (
    apply_rules,
    field_value,
    matching_template,
    rule_from_episodes,
)
from activities.memory.store import LedgerEntry, MemoryStore
from activities.metrics import record
from workflows.catalogue import CONSULT_MEMORY, REMEMBER_TASK, REMEMBER_TASKS
from workflows.contracts.estimates import point
from workflows.contracts.kinds import kind_covers, task_kind
from workflows.contracts.memory import (
    CACHE_AFTER,
    DEMOTE_BELOW,
    PROMOTE_AFTER,
    ConsultAnswer,
    ConsultInput,
    ConsultTask,
    Episode,
    MemoryRule,
    ProceduralTemplate,
    RememberAnswer,
    RememberInput,
    RememberTasksAnswer,
    RememberTasksInput,
    TaskAdvice,
    rule_confidence,
)
from workflows.contracts.plan import Scalar
from workflows.contracts.words import slug_words

__all__ = ["CONSULT_MEMORY", "REMEMBER_TASK", "REMEMBER_TASKS", "Memory", "build_episodes",
           "rule_id_for"]

log = logging.getLogger("assay.memory")

def rule_id_for(task_type_: str, root_cause: str) -> str:
    """Stable rule id: one rule per (task type, root cause)."""
    key = f"{task_type_}/{root_cause}".encode()
    return "sem-" + hashlib.sha256(key).hexdigest()[:10]


class Memory:
    """Memory activities over a :class:`MemoryStore` (``None``: memory is switched off).

    Args:
        store: the open memory store.
        keep: episodes kept per task type.
        max_age_days: episodes older than this are pruned.
        index: similar task types in Qdrant (``None``: exact task types only).
    """

    def __init__(self, store: MemoryStore | None, *, keep: int = 100,
                 max_age_days: float = 30, index: TaskTypeIndex | None = None) -> None:
        self.store = store
        self.keep = keep
        self.max_age_days = max_age_days
        self.index = index

    @CONSULT_MEMORY.defn
    async def consult_memory(self, req: ConsultInput) -> ConsultAnswer:
        """Rules to apply and templates to use for each task of a new plan."""
        if self.store is None:
            return ConsultAnswer(warnings=["memory is switched off on this worker"])
        answer = ConsultAnswer()
        for task in req.tasks:
            advice = await self._advise(task, req, answer.warnings)
            record.memory_looked_up("consult", found=advice.job is not None)
            answer.advice.append(advice)
        return answer

    async def _advise(self, task: ConsultTask, req: ConsultInput,
                      warnings: list[str]) -> TaskAdvice:
        kind = task_kind(task.action, task.job, task.input_names)
        advice = await self._advise_as(kind, task, req, warnings)
        if advice.job is not None or self.index is None:
            return advice
        try:
            similar = await self.index.similar(task.action, exclude=kind)
        except Exception as err:  # the index is a convenience; exact matching still works
            warnings.append(f"similar task types not searched: {type(err).__name__}: {err}")
            return advice
        for other, score in similar:
            found = await self._advise_as(other, task, req, warnings)
            if found.job is not None:
                return found.model_copy(update={
                    "task_type": kind, "similar_to": other, "similarity": score,
                    "skipped": [*advice.skipped, *found.skipped]})
        return advice

    async def _advise_as(self, kind: str, task: ConsultTask, req: ConsultInput,
                         warnings: list[str]) -> TaskAdvice:
        """Advice from what memory holds for task type ``kind``."""
        assert self.store is not None
        advice = TaskAdvice(task_id=task.task_id, task_type=kind)
        job = task.job
        if (job is None or job.source is None) and req.use_templates:
            templates = [t for t in await self.store.templates(cached_only=True)
                         if usable_template(kind, task.action, t)]
            template = matching_template(templates, task.input_names, advice.skipped)
            if template is not None:
                job, advice.job, advice.template_id = template.job, template.job, \
                    template.template_id
        if job is None or not req.apply_rules:
            return advice
        rules, problems = await self.store.rules(kind)
        warnings.extend(p for p in problems if p not in warnings)
        applied = apply_rules(job, rules, req.policy, min_confidence=req.min_confidence)
        advice.skipped.extend(applied.skipped)
        if applied.uses:
            advice.rules, advice.job = applied.uses, applied.job
        return advice

    @REMEMBER_TASK.defn
    async def remember_task(self, req: RememberInput) -> RememberAnswer:
        """Record a finished task and learn from it (episodes, rules, templates, ledger)."""
        answer = await self._learn(req)
        if self.store is not None:
            answer.pruned = await self._prune(answer.task_type, req.finished_at)
        return answer

    async def _prune(self, kind: str, now: datetime) -> int:
        assert self.store is not None
        return await self.store.prune(now, keep=self.keep, max_age_days=self.max_age_days,
                                      task_type=kind)

    async def _learn(self, req: RememberInput) -> RememberAnswer:
        """``remember_task`` without the pruning of the task's type."""
        kind = task_kind(req.action, req.first_job or req.final_job, req.input_names)
        answer = RememberAnswer(task_type=kind)
        if self.store is None:
            return answer
        store = self.store
        episodes = build_episodes(req, kind)
        answer.episodes = await store.record_episodes(episodes)
        await self._promote(req, kind, answer)
        if answer.episodes:  # counted once: a retried activity finds its episodes stored
            await self._validate(req, answer)
            await self._templates(req, kind, answer)
        await store.append_ledger(_outcome_entries(req, answer))
        if self.index is not None and (answer.rules_promoted or answer.templates_cached):
            try:
                await self.index.add(kind, req.action)
            except Exception as err:  # the index only widens matching; memory is stored
                log.warning("task type %s not indexed: %s", kind, err)
        return answer

    @REMEMBER_TASKS.defn
    async def remember_tasks(self, req: RememberTasksInput) -> RememberTasksAnswer:
        """``remember_task`` for each task in turn: arrival order decides, as one by one.

        A task that fails does not stop the others: each is learned from, then the first
        failure is raised, so the activity is retried as one task's would be. The retry
        repeats the tasks already learned from, which find their episodes stored and count
        nothing twice.

        Each task type of the batch is pruned once, after its last task, as of the latest
        time any of them finished: the episodes kept are those pruning after every task would
        keep (only new ones were added in between), and the last answer of the type counts
        them. Until then, the batch's later tasks count a type's failures among up to
        ``REMEMBER_AT_ONCE`` more of its episodes than one by one, which matters only for a
        type holding more than ``keep`` episodes, long past any rule's promotion.
        """
        answers: list[RememberAnswer] = []
        failed: BaseException | None = None
        latest: dict[str, tuple[datetime, RememberAnswer]] = {}
        for task in req.tasks:
            try:
                answer = await self._learn(task)
            except Exception as err:  # the rest are still learned from
                log.warning("remembering %s/%s failed: %s", task.run_id, task.task_id, err)
                failed = err if failed is None else failed
            else:
                answers.append(answer)
                seen = latest.get(answer.task_type)
                latest[answer.task_type] = (max(seen[0], task.finished_at) if seen
                                            else task.finished_at, answer)
            activity.heartbeat(len(answers))
        if self.store is not None:
            for kind, (now, answer) in latest.items():
                answer.pruned = await self._prune(kind, now)
        if failed is not None:
            raise failed
        return RememberTasksAnswer(answers=answers)

    async def _promote(self, req: RememberInput, kind: str, answer: RememberAnswer) -> None:
        """A root cause seen in enough tasks of this type becomes (or refreshes) a rule."""
        assert self.store is not None
        causes = sorted({f.root_cause for f in req.failures
                         if f.root_cause and f.root_cause != "unknown"})
        for cause in causes:
            seen = await self.store.failure_tasks(kind, cause)
            if seen < PROMOTE_AFTER:
                continue
            rule_id = rule_id_for(kind, cause)
            try:
                known = await self.store.rule(rule_id)
            except ValueError:  # unreadable or changed outside Assay: a person repairs it
                continue
            if known is not None:
                if known.occurrences != seen:
                    await self.store.update_rule(
                        rule_id, lambda r, n=seen: r.model_copy(update={"occurrences": n}))
                continue
            episodes = await self.store.episodes(kind, root_cause=cause)
            rule = rule_from_episodes(rule_id, kind, cause, episodes, seen)
            if rule is not None and rule.confidence >= DEMOTE_BELOW:
                rule = rule.model_copy(update={"status": promoted_status(req.promotion)})
                await self.store.save_rule(rule)
                (answer.rules_promoted if rule.status == "active"
                 else answer.candidates).append(rule_id)

    async def _existing(self, rule_id: str) -> MemoryRule | None:
        assert self.store is not None
        try:
            return await self.store.rule(rule_id)
        except ValueError:  # unreadable or changed outside Assay: a person must repair it
            return None

    async def _validate(self, req: RememberInput, answer: RememberAnswer) -> None:
        """Every rule the task used gains a success, or a failure if its cause came back."""
        assert self.store is not None
        used = dict.fromkeys(req.rules_applied)
        used.update(dict.fromkeys(f.rule_id for f in req.failures if f.rule_id))
        for rule_id in used:
            rule = await self._existing(rule_id)
            if rule is None:  # gone, unreadable or changed outside Assay: not counted
                continue
            recurred = any(f.root_cause == rule.root_cause for f in req.failures
                           if f.rule_id != rule_id)
            fixed_by_it = any(f.rule_id == rule_id for f in req.failures)
            success = req.status == "completed" and (fixed_by_it or not recurred)
            updated = await self.store.update_rule(
                rule_id, lambda r, ok=success: _validated(r, ok, req.finished_at))
            if rule.status == "active" and updated.status == "demoted":
                answer.rules_demoted.append(rule_id)
            answer.rules_validated.append(rule_id)

    async def _templates(self, req: RememberInput, kind: str, answer: RememberAnswer) -> None:
        assert self.store is not None
        if req.template_id:
            await self.store.note_template_use(req.template_id,
                                               success=req.status == "completed",
                                               now=req.finished_at)
        job = req.final_job
        clean = req.status == "completed" and not req.failures and req.attempts <= 1
        if not clean or job is None or job.source is None:
            return
        template = await self.store.note_clean_success(kind, req.action, job, req.input_names,
                                                       req.finished_at, req.promotion)
        if template.clean_successes == CACHE_AFTER:  # reported once
            (answer.templates_cached if template.cached
             else answer.candidates).append(template.template_id)


def usable_template(kind: str, action: str, template: ProceduralTemplate) -> bool:
    """Whether a task of ``kind`` with no job may take the template's job.

    Its kind must cover the template's (the same analysis family, and the same data and
    metrics where it names them), or its action be the template's, word for word.
    """
    return (kind_covers(kind, template.task_type)
            or slug_words(action) == slug_words(template.action))


def _validated(rule: MemoryRule, success: bool, when: datetime) -> MemoryRule:
    """The rule with one more success or failure, demoted if it stopped working."""
    s = rule.success_count + (1 if success else 0)
    f = rule.failure_count + (0 if success else 1)
    confidence = rule_confidence(s, f)
    demote = rule.status == "active" and confidence < DEMOTE_BELOW
    return rule.model_copy(update={
        "success_count": s, "failure_count": f, "confidence": confidence,
        "status": "demoted" if demote else rule.status, "last_validated": when})


def build_episodes(req: RememberInput, kind: str) -> list[Episode]:
    """One episode per failed attempt, plus one for the attempt that succeeded."""
    completed = req.status == "completed"
    fix = _final_values(req)
    episodes: list[Episode] = []
    for n, failure in enumerate(req.failures, start=1):
        episodes.append(Episode(
            episode_id=_episode_id(req, f"{failure.phase}/{failure.attempt}/{n}"),
            recorded_at=req.finished_at, run_id=req.run_id, task_id=req.task_id,
            task_type=kind, phase=failure.phase, attempt=failure.attempt,
            root_cause=failure.root_cause, patch_id=failure.patch_id,
            patch_source=failure.patch_source, changes=failure.changes,
            outcome="fixed" if completed else "unfixed",
            fix=fix if completed else {}, environment=req.environment))
    if completed:
        episodes.append(Episode(
            episode_id=_episode_id(req, "success"), recorded_at=req.finished_at,
            run_id=req.run_id, task_id=req.task_id, task_type=kind, phase="finalize",
            attempt=req.attempts, outcome="success", environment=req.environment,
            job_sha256=_job_sha(req), metrics=_plain_metrics(req), duration_s=req.duration_s))
    return episodes


def _final_values(req: RememberInput) -> dict[str, Scalar]:
    """The final job's value of every field an applied patch changed."""
    if req.final_job is None:
        return {}
    values: dict[str, Scalar] = {}
    for failure in req.failures:
        if failure.patch_outcome != "applied":
            continue
        for change in failure.changes:
            present, value = field_value(req.final_job, change.field)
            if present and value is not None:
                values[change.field] = value
    return values


def _episode_id(req: RememberInput, what: str) -> str:
    key = f"{req.run_id}/{req.task_id}/{what}".encode()
    return "ep-" + hashlib.sha256(key).hexdigest()[:16]


def _job_sha(req: RememberInput) -> str:
    source = (req.final_job.source or "") if req.final_job else ""
    return hashlib.sha256(source.encode()).hexdigest() if source else ""


def _plain_metrics(req: RememberInput) -> dict[str, Scalar]:
    """Scalar metrics only (an estimate by its point value), at most 50: episodes stay small."""
    plain = {k: v for k, raw in req.metrics.items()
             if (v := point(raw)) is not None and len(k) <= 128}
    return dict(list(plain.items())[:50])


def _outcome_entries(req: RememberInput, answer: RememberAnswer) -> list[LedgerEntry]:
    """Ledger entries closing the loop note -> patch -> outcome, plus what was learned."""
    entries: list[LedgerEntry] = []
    for failure in req.failures:
        if not failure.patch_id:
            continue
        entries.append(LedgerEntry(
            entry_id=f"outcome/{req.run_id}/{req.task_id}/{failure.patch_id}", kind="outcome",
            run_id=req.run_id, task_id=req.task_id,
            body={"note_id": failure.note_id, "patch_id": failure.patch_id,
                  "patch_outcome": failure.patch_outcome, "task_status": req.status,
                  "source": failure.patch_source, "rule_id": failure.rule_id}))
    entries.extend(LedgerEntry(entry_id=f"rule/{rule_id}/promoted", kind="rule",
                               run_id=req.run_id, task_id=req.task_id,
                               body={"rule_id": rule_id, "event": "promoted"})
                   for rule_id in answer.rules_promoted)
    entries.extend(LedgerEntry(entry_id=f"rule/{rule_id}/demoted/{req.run_id}/{req.task_id}",
                               kind="rule", run_id=req.run_id, task_id=req.task_id,
                               body={"rule_id": rule_id, "event": "demoted"})
                   for rule_id in answer.rules_demoted)
    entries.extend(LedgerEntry(entry_id=f"template/{tid}/cached", kind="template",
                               run_id=req.run_id, task_id=req.task_id,
                               body={"template_id": tid, "event": "cached"})
                   for tid in answer.templates_cached)
    return entries
