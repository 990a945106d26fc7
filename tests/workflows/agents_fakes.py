"""Scripted agent roles for workflow tests: each answers from what the test set up.

The workflows' handling of agents (budgets, fallbacks, merging verdicts, choosing a fix) is
tested with these; the role activities themselves, against a fake Messages API server, in
``tests/activities`` and the end-to-end test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from temporalio.exceptions import ApplicationError

from workflows.catalogue import PROBE_ENVIRONMENT
from workflows.contracts.cycles import SynthesisAnswer, SynthesisRequest
from workflows.contracts.plan import JobSpec
from workflows.contracts.roles import (
    CodeAnswer,
    CodeRequest,
    DebugAnswer,
    DebugRequest,
    EnvironmentFacts,
    ModelReviewAnswer,
    ModelReviewRequest,
    PlanAnswer,
    PlanDraftOutput,
    PlannedTask,
    PlanRequest,
    PlanReviewAnswer,
    PlanReviewOutput,
    PlanReviewRequest,
    RunAnswer,
    SummaryAnswer,
    SummaryRequest,
)
from workflows.contracts.spend import Spend, Usage
from workflows.contracts.synthesis import StudySynthesis
from workflows.contracts.verdicts import Finding, ReviewVerdict

CALL_USAGE = Usage(input_tokens=1000, output_tokens=200, cost_usd=0.01)
"""What every scripted call spends, so totals are easy to check."""


def spend(role: str) -> Spend:
    """One call's spend for ``role``."""
    return Spend(role=role, model="scripted", calls=1, usage=CALL_USAGE, exchange_ids=["x"])


def job(marker: str = "ok", *, score: float | None = None, code: str = "",
        **changes: Any) -> JobSpec:
    """A job whose fake run behaves as ``marker`` says (see the harness's FakeSandbox)."""
    source = code or f"# behave: {marker}\n" + (f"# score: {score}\n" if score else "") + \
        "print('working')\n"
    fields: dict[str, Any] = {"code": source, "source": source, "filename": "job.py",
                              "expected_artifacts": ["out.txt"], "expected_metrics": ["score"]}
    fields.update(changes)
    return JobSpec.model_validate(fields)


@dataclass
class FakeAgents:
    """Role activities answering from scripts; every request is kept for assertions."""

    drafts: list[PlanDraftOutput] = field(default_factory=list[PlanDraftOutput])
    plan_verdicts: list[PlanReviewOutput] = field(default_factory=list[PlanReviewOutput])
    jobs: dict[str, JobSpec] = field(default_factory=dict[str, JobSpec])
    """Coder answers by mode (``fast``, ``deep``)."""
    model_verdicts: Callable[[ModelReviewRequest], ReviewVerdict] | None = None
    fixes: dict[str, DebugAnswer] = field(default_factory=dict[str, DebugAnswer])
    """Debugger answers by strategy (``diagnostic_first`` for the diagnostic script)."""
    requests: dict[str, list[Any]] = field(default_factory=dict[str, list[Any]])
    synthesis: StudySynthesis | None = None
    """The study synthesizer's answer (None: it fails, non-retryable)."""

    def _seen(self, name: str, req: Any) -> None:
        self.requests.setdefault(name, []).append(req)

    async def plan_goal(self, req: PlanRequest) -> PlanAnswer:
        self._seen("plan_goal", req)
        return PlanAnswer(draft=self.drafts.pop(0), spend=spend("planner"))

    async def review_plan(self, req: PlanReviewRequest) -> PlanReviewAnswer:
        self._seen("review_plan", req)
        verdict = self.plan_verdicts.pop(0) if self.plan_verdicts else PlanReviewOutput(
            verdict="APPROVE")
        return PlanReviewAnswer(review=verdict, spend=spend("plan_reviewer"))

    async def write_job(self, req: CodeRequest) -> CodeAnswer:
        self._seen("write_job", req)
        return CodeAnswer(job=self.jobs[req.mode], reasoning=f"{req.mode} path",
                          confidence=0.8, spend=spend("coder"))

    async def review_job_model(self, req: ModelReviewRequest) -> ModelReviewAnswer:
        self._seen("review_job_model", req)
        if self.model_verdicts is not None:
            verdict = self.model_verdicts(req)
        else:
            verdict = ReviewVerdict(reviewer=req.reviewer, verdict="APPROVE", confidence=0.9,
                                    reasoning="looks right", details={"source": "model"})
        return ModelReviewAnswer(verdict=verdict, spend=spend(f"reviewer_{req.reviewer}"))

    async def debug_job(self, req: DebugRequest) -> DebugAnswer:
        self._seen("debug_job", req)
        key = req.strategy
        if req.strategy == "diagnostic" and req.diagnostic_output is None:
            key = "diagnostic_first"
        answer = self.fixes[key]
        return answer.model_copy(update={"spend": spend(f"debugger_{req.strategy}")})

    async def summarize_run(self, req: SummaryRequest) -> SummaryAnswer:
        self._seen("summarize_run", req)
        done = [t.task_id for t in req.tasks if t.status == "completed"]
        return SummaryAnswer(answer=RunAnswer(answer=f"tasks {done} answered the goal",
                                              analysis="scores as reported"),
                             spend=spend("output_processor"))

    async def synthesize_study(self, req: SynthesisRequest) -> SynthesisAnswer:
        self._seen("synthesize_study", req)
        if self.synthesis is None:
            raise ApplicationError("the study synthesizer gave an unusable answer",
                                   type="InvalidModelOutput", non_retryable=True)
        return SynthesisAnswer(synthesis=self.synthesis, spend=spend("study_synthesizer"))

    def overrides(self) -> dict[str, Any]:
        """The role activities by name, for ``Harness(overrides=...)``."""
        return {"plan_goal": self.plan_goal, "review_plan": self.review_plan,
                "write_job": self.write_job, "review_job_model": self.review_job_model,
                "debug_job": self.debug_job, "summarize_run": self.summarize_run,
                "synthesize_study": self.synthesize_study}


@PROBE_ENVIRONMENT.defn
async def probe_environment() -> EnvironmentFacts:
    """A fixed interpreter description."""
    return EnvironmentFacts(python="3.12.0", packages={"numpy": "2.0.0"})


def model_reject(reviewer: str, message: str) -> Callable[[ModelReviewRequest], ReviewVerdict]:
    """Model verdicts where ``reviewer`` rejects jobs that are not deep-path ones."""

    def verdict(req: ModelReviewRequest) -> ReviewVerdict:
        deep = "deep" in (req.review.job.source or "")
        if req.reviewer == reviewer and not deep:
            return ReviewVerdict(reviewer=req.reviewer, verdict="REJECT", confidence=0.8,
                                 critical=[Finding(code="model.critical", message=message,
                                                   severity="critical")])
        return ReviewVerdict(reviewer=req.reviewer, verdict="APPROVE", confidence=0.9)

    return verdict


def goal_agents(*, load_inputs: list[str] | None = None) -> FakeAgents:
    """Two planned tasks, load then fit; fixes for the crash a scenario gives fit's first job.

    ``load_inputs`` are the data files the planner has the load task read.
    """
    fix = "# behave: ok\n# score: 0.8\nprint('fixed')\n"
    return FakeAgents(
        drafts=[PlanDraftOutput(tasks=[
            PlannedTask(task_id="load", action="load", acceptance_criteria=["loaded"],
                        inputs=load_inputs or []),
            PlannedTask(task_id="fit", action="fit", acceptance_criteria=["fitted"],
                        dependencies=["load"])])],
        jobs={"fast": job("ok")},
        fixes={s: DebugAnswer(strategy=s, job=job(code=fix), diagnosis="fixed",
                              confidence=0.8, spend=spend("debugger"))
               for s in ("direct", "introspect", "diagnostic")}
        | {"diagnostic_first": DebugAnswer(strategy="diagnostic", spend=spend("debugger"),
                                           diagnostic_job=job("diagnose"))})
