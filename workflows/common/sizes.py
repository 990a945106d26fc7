"""How big a task's and a run's results may be, and how they are cut to fit.

A task's result is its child workflow's result, kept in the run's history; a run's result is
the payload of its workflow's completion. Temporal refuses a payload over 2 MiB, and a refused
completion is a failed workflow task, retried for ever: the run never ends. So every list a
task's result carries is capped (:func:`bound_task`), a run's result keeps each task's status
and reason only (:func:`task_summary`), and a result still over its limit sheds what it can
and says so in its status and reason (:func:`bound_task`, :func:`fit_run`). Nothing is lost:
a task writes its whole result beside the run's report, and the report has every task's.

Deterministic workflow code only: sizes are measured on the JSON the data converter sends.
"""

from __future__ import annotations

from collections.abc import Set
from functools import cache
from typing import Any, TypeVar

from pydantic import BaseModel

from workflows.contracts.execution import ExecutionOutcome
from workflows.contracts.memory import ReflectionSummary
from workflows.contracts.plaintext import clip
from workflows.contracts.plan import JobSpec
from workflows.contracts.reflection import ReflectionNote
from workflows.contracts.results import (
    Provenance,
    ResearchResult,
    TaskResult,
    TaskSummary,
)
from workflows.contracts.skills import SkillSummary
from workflows.contracts.verdicts import ReviewVerdict

TASK_RESULT_LIMIT = 128 * 1024
"""Most bytes a task's result may have (it lives on in the run's history)."""
RUN_RESULT_LIMIT = 512 * 1024
"""Most bytes a run's result may have: a quarter of Temporal's 2 MiB payload limit, and the
size at which Temporal starts warning."""
LISTED_ARTIFACTS = 100
"""Artifacts (and files with checksums) a task's result lists; its dependants get these."""
LISTED_ITEMS = 50
"""Entries kept of every other list in a task's result (checks, findings, patches...)."""
METRICS_BYTES = 16 * 1024
"""Most bytes of metrics a task's result carries (whole metrics, in the job's order)."""
DETAILS_BYTES = 4 * 1024
"""Most bytes of a reviewer's free-form ``details`` kept."""
REASON_CHARS = 2000
"""Longest status reason, reasoning or diagnosis text kept."""
SUMMARY_CHARS = 400
"""Longest action and status reason in a run's per-task summary."""
JOB_BYTES = 16 * 1024
"""Most bytes of the job a task's result keeps (a branch from ``execute`` starts from it)."""

ItemT = TypeVar("ItemT")
ModelT = TypeVar("ModelT", bound=BaseModel)


def json_size(model: BaseModel) -> int:
    """Bytes of ``model`` as JSON, as the data converter encodes it."""
    return len(model.model_dump_json().encode())


def bound_task(result: TaskResult, *, limit: int | None = None) -> TaskResult:
    """``result`` with every list capped and noted in ``omitted``.

    A result over ``limit`` (default :data:`TASK_RESULT_LIMIT`) even so (very long artifact
    names, say) is cut to its status and reason: a completed task is then ``failed``, since
    its dependants could not be given its artifacts, and the reason says so and where the
    whole result is.
    """
    limit = TASK_RESULT_LIMIT if limit is None else limit
    notes: list[str] = []
    capped = result.model_copy(update={
        "status_reason": clip(result.status_reason, REASON_CHARS),
        "artifacts": _listed(result.artifacts, LISTED_ARTIFACTS, "artifacts", notes),
        "artifacts_total": result.artifact_count(),
        "metrics": _metrics(result.metrics, notes),
        "checks": _listed(result.checks, LISTED_ITEMS, "checks", notes),
        "execution": _execution(result.execution),
        "verdicts": [_verdict(v, notes) for v in result.verdicts[:LISTED_ITEMS]],
        "reflections": [_note(n) for n in _listed(result.reflections, LISTED_ITEMS,
                                                    "reflections", notes)],
        "provenance": _provenance(result.provenance, notes),
        "job": _job(result, notes),
        "omitted": [*result.omitted, *notes],
    })
    size = json_size(capped)
    return capped if size <= limit else _too_big(capped, size, limit)


def task_summary(task: TaskResult) -> TaskSummary:
    """How ``task`` ended, as a run's result lists it."""
    return TaskSummary(task_id=task.task_id, priority=task.priority,
                       action=clip(task.action, SUMMARY_CHARS), status=task.status,
                       status_reason=clip(task.status_reason, SUMMARY_CHARS),
                       attempts_total=task.attempts_total, artifact_count=task.artifact_count())


def fit_run(result: ResearchResult, *, limit: int | None = None) -> ResearchResult:
    """``result`` as it is if it fits ``limit``, else cut until it does.

    ``limit`` defaults to :data:`RUN_RESULT_LIMIT`. The result goes without its plan,
    then its per-task list, then its summaries, then its answer, and its reason says what
    went. Its status stays (its tasks did end as counted), and the report has everything.
    """
    limit = RUN_RESULT_LIMIT if limit is None else limit
    size = json_size(result)
    if size <= limit:
        return result
    fitted, omitted = result, list(result.omitted)
    for what, update in _shedding(result):
        fitted = fitted.model_copy(update=update)
        omitted.append(what)
        if json_size(fitted) <= limit:
            break
    where = (result.report.results_json if result.report is not None
             else "nowhere: the report could not be written; see the run's events")
    reason = (f"{clip(result.status_reason, REASON_CHARS)} [this result had {size:,} bytes, "
              f"over its {limit:,}-byte limit: {'; '.join(omitted) or 'nothing'} left out; the "
              f"report has everything: {where}]")
    return fitted.model_copy(update={"omitted": omitted, "status_reason": reason})


def _shedding(result: ResearchResult) -> list[tuple[str, dict[str, Any]]]:
    """What a run's result can do without, least missed first (what it has, only)."""
    steps: list[tuple[bool, str, dict[str, Any]]] = [
        (result.plan is not None, "the plan", {"plan": None}),
        (result.branches is not None, "the branch tree", {"branches": None}),
        (bool(result.tasks), f"the per-task list ({len(result.tasks)} tasks; counts kept)",
         {"tasks": []}),
        (result.reflection != ReflectionSummary() or result.skills != SkillSummary(),
         "the reflection and skill summaries",
         {"reflection": ReflectionSummary(), "skills": SkillSummary()}),
        (result.answer is not None or bool(result.gates), "the answer and the gate records",
         {"answer": None, "gates": []}),
    ]
    return [(what, update) for has, what, update in steps if has]


def _too_big(result: TaskResult, size: int, limit: int) -> TaskResult:
    where = f"{result.detail} and the task's events" if result.detail else "the task's events"
    status = "failed" if result.status == "completed" else result.status
    reason = (f"the task's result has {size:,} bytes even with its lists cut, over the "
              f"{limit:,}-byte limit of a task's result, so its detail is left out (it ended "
              f"{result.status}: {clip(result.status_reason, SUMMARY_CHARS)}); the whole result "
              f"is in {where}. Give the job shorter artifact names, metrics and messages")
    return TaskResult(
        task_id=result.task_id, priority=result.priority,
        action=clip(result.action, SUMMARY_CHARS), status=status, status_reason=reason,
        attempts_total=result.attempts_total, model=result.model,
        provenance=Provenance(workflow_id=result.provenance.workflow_id,
                              job_author=result.provenance.job_author),
        started_at=result.started_at, finished_at=result.finished_at,
        artifacts_total=result.artifacts_total, detail=result.detail,
        omitted=[f"everything but the status ({size:,} bytes > {limit:,})"])


def _listed(items: list[ItemT], limit: int, what: str, notes: list[str]) -> list[ItemT]:
    if len(items) <= limit:
        return items
    notes.append(f"{what}: {limit} of {len(items)} listed")
    return items[:limit]


def _metrics(metrics: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """Whole metrics, in the job's order, while they fit :data:`METRICS_BYTES`."""
    kept: dict[str, Any] = {}
    used = 0
    for name, value in metrics.items():
        cost = len(name) + len(_Json(value=value).model_dump_json())
        if used + cost <= METRICS_BYTES:
            kept[name] = value
            used += cost
    if len(kept) < len(metrics):
        notes.append(f"metrics: {len(kept)} of {len(metrics)} kept ({METRICS_BYTES:,} bytes)")
    return kept


def _execution(outcome: ExecutionOutcome | None) -> ExecutionOutcome | None:
    """The outcome with bounded tails; its artifacts and metrics are the result's own."""
    if outcome is None:
        return None
    return outcome.model_copy(update={
        "stdout_tail": outcome.stdout_tail[-REASON_CHARS:],
        "stderr_tail": outcome.stderr_tail[-REASON_CHARS:],
        "reason": clip(outcome.reason, REASON_CHARS), "artifacts": [], "metrics": {}})


def _job(result: TaskResult, notes: list[str]) -> JobSpec | None:
    """The job, while it fits :data:`JOB_BYTES` (its code is in the task's detail file)."""
    job = result.job
    if job is None or json_size(job) <= JOB_BYTES:
        return job
    notes.append(f"job: left out ({json_size(job):,} bytes > {JOB_BYTES:,}); branch from "
                 "the task's planned checkpoint instead of execute")
    return None


def _verdict(verdict: ReviewVerdict, notes: list[str]) -> ReviewVerdict:
    what = f"review {verdict.reviewer}"
    details = verdict.details
    if len(_Json(value=details).model_dump_json()) > DETAILS_BYTES:
        notes.append(f"{what}: details left out")
        details = {}
    return verdict.model_copy(update={
        "warnings": _listed(verdict.warnings, LISTED_ITEMS, f"{what} warnings", notes),
        "critical": _listed(verdict.critical, LISTED_ITEMS, f"{what} critical flags", notes),
        "checks": dict(list(verdict.checks.items())[:LISTED_ITEMS]),
        "reasoning": clip(verdict.reasoning, REASON_CHARS), "details": details})


def _note(note: ReflectionNote) -> ReflectionNote:
    """A reflection note without the patched job's code (the job that ran is in provenance)."""
    return note.model_copy(update={
        "patched_job": None, "evidence": note.evidence[:LISTED_ITEMS],
        "patterns": note.patterns[:LISTED_ITEMS], "reason": clip(note.reason, REASON_CHARS),
        "root_cause": clip(note.root_cause, REASON_CHARS),
        "likely_fix": clip(note.likely_fix, REASON_CHARS)})


def _provenance(prov: Provenance, notes: list[str]) -> Provenance:
    files = _listed(prov.artifacts, LISTED_ARTIFACTS, "provenance files", notes)
    return prov.model_copy(update={
        "artifacts": files,
        "checksums": {n: prov.checksums[n] for n in files if n in prov.checksums},
        "patches": _listed(prov.patches, LISTED_ITEMS, "patches", notes),
        "approvals": prov.approvals[-LISTED_ITEMS:],
        "reflection_ids": prov.reflection_ids[:LISTED_ITEMS],
        "memory_rules": prov.memory_rules[:LISTED_ITEMS]})


class _Json(BaseModel):
    """Any JSON value, measured the way the data converter writes it.

    Built at import, unlike the contracts: it is one field, and a workflow task measures with
    it, which is no place to build a validator (``workflows.contracts.base.Model``).
    """

    value: Any


@cache
def _blank() -> TaskResult:
    """A result with every field at its default, which :func:`quick_result` copies.

    Made at its first use, not at import: building the contracts' validators is most of what
    starting the CLI costs (``workflows.contracts.base.Model``).
    """
    return TaskResult(task_id="-", status="cancelled", status_reason="")


def quick_result(**fields: Any) -> TaskResult:
    """A result of ``fields`` (the rest at their defaults), made without validating.

    Building and validating a ``TaskResult`` takes some 0.3 ms (its defaults are models
    built and checked each time): 3 s for the 10 000 tasks of a large run, past Temporal's
    deadlock detector. This copies one blank result instead, sharing its defaults, so a
    result made here is read, never changed in place. ``fields`` must be valid.
    """
    return _blank().model_copy(update=fields)


LEAN_DROPPED = frozenset({"verdicts", "phases", "omitted"})
"""What a large run does not keep of a task's result once its batch ended: the reviews'
verdicts, the phases' marks and what was cut (the report reads them from the detail file)."""
_RUN_PROVENANCE = frozenset({"patches", "reflection_misses", "memory_rules", "template_id",
                             "guidelines", "approvals", "job_author", "workflow_id"})
"""The provenance a run folds into its summaries (reflection, skills, checkpoints)."""


@cache
def _blank_job() -> JobSpec:
    """A job with every field at its default, shared by the lean results."""
    return JobSpec(code="-")


@cache
def _blank_outcome() -> ExecutionOutcome:
    """An outcome with every field at its default, shared by the lean results."""
    return ExecutionOutcome(outcome="succeeded")


def lean_result(result: TaskResult) -> TaskResult:
    """``result`` as a large run keeps it once its batch ended.

    The same, less :data:`LEAN_DROPPED` and the provenance the run never reads.

    A whole result is some 80 to 100 objects the garbage collector walks; 10 000 of them
    made each full collection of the worker's process take seconds, past Temporal's 2-second
    deadlock detector, for whichever workflow it hit. A lean one shares the defaults of a
    blank result, job and outcome (under half the objects); the task's detail file has all.
    """
    blank = _blank()
    lean = _lean(result, blank, {n for n in TaskResult.model_fields if n not in LEAN_DROPPED})
    update: dict[str, Any] = {
        "provenance": _lean(result.provenance, blank.provenance, _RUN_PROVENANCE),
        "artifacts_total": result.artifact_count()}
    if result.job is not None:
        update["job"] = _lean(result.job, _blank_job(), set(JobSpec.model_fields))
    if result.execution is not None:
        update["execution"] = _lean(result.execution, _blank_outcome(),
                                    set(ExecutionOutcome.model_fields))
    return lean.model_copy(update=update)


def _lean(model: ModelT, blank: ModelT, fields: Set[str]) -> ModelT:
    """``blank`` with ``model``'s ``fields`` that differ from it (the rest shared with it)."""
    return blank.model_copy(update={name: value for name in fields
                                    if (value := getattr(model, name)) != getattr(blank, name)})
