"""Turning the roles' structured answers into the workflow's own types, or saying why not.

Each conversion raises ``ValueError`` with a message the model can act on; the gateway
sends that message back for repair (see ``Vet``), so an answer that fits its schema but not
the workflow (code that does not parse, a requirement given as a URL, a plan whose
dependencies form a cycle, a fix identical to the job that failed) is corrected by the
model or fails the call clearly, never later in the workflow.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from pydantic import ValidationError

from activities.review.common import ParseFailure, parse_job
from workflows.agents.planning import hypotheses_of
from workflows.common.validation import field_errors
from workflows.contracts.environments import BASE, check_requirement
from workflows.contracts.hypotheses import HypothesisTree
from workflows.contracts.plan import (
    Check,
    Decision,
    JobSpec,
    Plan,
    PlanError,
    Resources,
    check_graph,
)
from workflows.contracts.roles import (
    DebugOutput,
    DiagnosticOutput,
    JobOutput,
    ModelReviewOutput,
    PlanDraftOutput,
    PlanReviewOutput,
)
from workflows.contracts.verdicts import Finding, Reviewer, ReviewVerdict

JOB_FILENAME = "job.py"
DIAGNOSTIC_FILENAME = "diagnose.py"
DIAGNOSTIC_TIMEOUT_S = 120.0
MAX_LISTED = 5


def problem_of(err: ValueError) -> str:
    """``err`` in words for the model: each validation error located by its field."""
    if not isinstance(err, ValidationError):
        return str(err)
    return "; ".join(f"at `{e.where}`: {e.message}"
                     for e in field_errors(err, whole="the top level", most=MAX_LISTED))


def _code(code: str, filename: str) -> str:
    parsed = parse_job(code, filename)
    if isinstance(parsed, ParseFailure):
        raise ValueError(f"the code must be valid Python 3: {parsed.message}")
    return code


def _requirements(requirements: Iterable[str]) -> list[str]:
    """Requirements as the index knows them (``name``, ``name>=1.2``); nothing else."""
    return [check_requirement(text.strip()) for text in requirements]


def job_from_output(out: JobOutput, environments: Collection[str] = ()) -> JobSpec:
    """The coder's answer as a job spec ready for review (``source`` and ``filename`` set).

    Raises:
        ValueError: it names an environment outside ``environments`` (the named sets the
            worker knows) and ``base``.
    """
    code = _code(out.code, JOB_FILENAME)
    named = out.environment
    if named is not None and named != BASE and named not in environments:
        known = ", ".join(sorted({BASE, *environments}))
        raise ValueError(f"`environment` names {named!r}, which this machine does not have; "
                         f"name one of {known}, or leave it out and list the packages the "
                         "job needs in `requirements`")
    return JobSpec(code=code, source=code, filename=JOB_FILENAME, args=out.args,
                   environment=named,
                   expected_artifacts=out.expected_artifacts,
                   expected_metrics=out.expected_metrics,
                   resources=Resources(memory_mb=out.resources.memory_mb,
                                       timeout_s=out.resources.timeout_s),
                   requirements=_requirements(out.requirements))


def fixed_job(job: JobSpec, out: DebugOutput) -> JobSpec:
    """``job`` with a debugger's code (and requirements, if it gave any).

    Filename, arguments, expected artifacts and metrics and resources stay as they were: a
    fix changes the code, not what the task promised.
    """
    filename = job.filename or JOB_FILENAME
    code = _code(out.code, filename)
    requirements = (job.requirements if out.requirements is None
                    else _requirements(out.requirements))
    if code == (job.source or job.code) and requirements == job.requirements:
        raise ValueError("the fix is identical to the job that failed; change the code so "
                         "the failure cannot happen again")
    update: dict[str, Any] = {"entry": None, "code": code, "source": code,
                              "requirements": requirements}
    return JobSpec.model_validate(job.model_copy(update=update).model_dump())


def diagnostic_job(job: JobSpec, out: DiagnosticOutput) -> JobSpec:
    """A diagnostic script as a job: same memory, at most two minutes, nothing promised."""
    code = _code(out.code, DIAGNOSTIC_FILENAME)
    limits = job.resources
    return JobSpec(code=code, source=code, filename=DIAGNOSTIC_FILENAME,
                   resources=Resources(memory_mb=limits.memory_mb, cpus=limits.cpus,
                                       timeout_s=min(limits.timeout_s, DIAGNOSTIC_TIMEOUT_S)))


def model_verdict(reviewer: Reviewer, out: ModelReviewOutput, model: str) -> ReviewVerdict:
    """A model reviewer's answer as a ``ReviewVerdict`` the approval gate understands."""
    if out.verdict == "APPROVE" and out.critical:
        raise ValueError("an APPROVE verdict cannot list critical problems; REJECT, or move "
                         "them to warnings if the job may run")
    return ReviewVerdict(
        reviewer=reviewer, verdict=out.verdict, confidence=out.confidence,
        critical=[Finding(code="model.critical", message=m, severity="critical")
                  for m in out.critical],
        warnings=[Finding(code="model.warning", message=m, severity="warning")
                  for m in out.warnings],
        reasoning=out.reasoning, details={"source": "model", "model": model})


def plan_review(out: PlanReviewOutput) -> PlanReviewOutput:
    """A plan review, refused when it rejects without saying what must change."""
    if out.verdict == "REJECT" and not out.concerns:
        raise ValueError("a REJECT verdict must list at least one concern: what must change")
    return out


def plan_draft(out: PlanDraftOutput, data_names: Iterable[str],
               tree: HypothesisTree | None = None) -> PlanDraftOutput:
    """A drafted plan, refused unless its ids, dependencies and inputs hold together.

    A study's draft (``tree`` given) must also propose valid hypotheses and link its tasks
    to known ones; it comes back as a plain :class:`PlanDraftOutput`.
    """
    if tree is not None:
        _, wrong = hypotheses_of(out, tree)
        if wrong:
            raise ValueError("the plan's hypotheses do not hold together: "
                             + "; ".join(wrong[:MAX_LISTED]))
        out = PlanDraftOutput.model_validate(out.model_dump())
    known = set(data_names)
    for task in out.tasks:
        unknown = [name for name in task.inputs if name not in known]
        if unknown:
            offered = ", ".join(sorted(known)) or "none"
            raise ValueError(f"task {task.task_id} reads {', '.join(unknown)}, which the goal "
                             f"does not provide (data files: {offered})")
    plan = Plan(context=out.context or None, decisions=[
        Decision(task_id=t.task_id, priority=t.priority, action=t.action,
                 acceptance_criteria=t.acceptance_criteria, dependencies=t.dependencies,
                 checks=[Check(metric=c.metric, op=c.op, value=c.value) for c in t.checks],
                 inputs=t.inputs, rationale=t.rationale or None)
        for t in out.tasks])
    try:
        check_graph(plan)
    except PlanError as err:
        raise ValueError(f"the plan's tasks do not form a valid graph: {err}") from None
    return out
