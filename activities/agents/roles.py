"""The model-backed agent roles, as activities on the agents pool.

Each role renders its request into a prompt (``agents_render``, system prompts in
``prompts/``), asks the model gateway for its structured answer with the run's budget and
recording, and turns the answer into the workflow's own type (``agents_convert``). An answer
that fits its schema but not the workflow goes back to the model for repair; one that stays
wrong fails as ``InvalidModelOutput``. Every answer says what it spent.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from temporalio.exceptions import ApplicationError

from activities.agents import convert, render
from activities.agents.answers import checked, format_section
from activities.agents.guidance import GUIDELINE_TOKENS, GuidelineSource, guidance_section
from activities.agents.judging import judge_message
from activities.agents.previews import artifact_previews, previews, reusable_previews
from activities.agents.prompting import message, system_prompt
from activities.agents.reflector import reflect_message, reflector_note
from activities.agents.synthesis import synthesis_message, synthesis_of, with_reports
from activities.artifacts.store import ArtifactStore
from activities.llm.errors import spent
from activities.llm.gateway import ModelGateway
from activities.llm.helpers import Helper
from activities.profiles.stored import DataProfiles
from workflows.catalogue import (
    DEBUG_JOB,
    JUDGE_HYPOTHESIS,
    PLAN_GOAL,
    REFLECT_FAILURE,
    REVIEW_JOB_MODEL,
    REVIEW_PLAN,
    SUMMARIZE_RUN,
    SYNTHESIZE_STUDY,
    WRITE_JOB,
)
from workflows.contracts.base import Model
from workflows.contracts.cycles import SynthesisAnswer, SynthesisRequest
from workflows.contracts.errors import ErrorType
from workflows.contracts.goal import RunAnswerInFormat
from workflows.contracts.judging import JudgeAnswer, JudgeOutput, JudgeRequest
from workflows.contracts.reflector import ReflectAnswer, ReflectorOutput, ReflectRequest
from workflows.contracts.roles import (
    AgentRequest,
    CodeAnswer,
    CodeRequest,
    DebugAnswer,
    DebugOutput,
    DebugRequest,
    DiagnosticOutput,
    JobOutput,
    ModelReviewAnswer,
    ModelReviewOutput,
    ModelReviewRequest,
    PlanAnswer,
    PlanDraftOutput,
    PlanRequest,
    PlanReviewAnswer,
    PlanReviewOutput,
    PlanReviewRequest,
    RunAnswer,
    StudyPlanDraftOutput,
    SummaryAnswer,
    SummaryRequest,
)
from workflows.contracts.spend import ChatMessage, ModelAnswer, ModelCall, Spend
from workflows.contracts.synthesis import SynthesisOutput

JOB_CONTRACT = "job_contract"
"""Shared prompt: how a job runs in the sandbox (coder and debuggers)."""
RESEARCHER = "researcher"
"""Shared prompt: the offline documentation lookups (coder and debuggers, when configured)."""
MAX_TOKENS: dict[str, int] = {"planner": 8192, "plan_reviewer": 2048, "coder": 16_384,
                              "reviewer": 2048, "debugger": 16_384, "output_processor": 4096,
                              "study_synthesizer": 4096, "reflector": 2048}

_O = TypeVar("_O", bound=Model)
_R = TypeVar("_R")


@dataclass(frozen=True)
class Consulted(Generic[_R]):
    """A role's converted answer, the model that gave it and what it spent."""

    value: _R
    model: str
    spend: Spend
    guidelines: list[str]


@functools.cache
def _schema(contract: type[Model]) -> dict[str, Any]:
    return contract.model_json_schema()


def _spend(role: str, answer: ModelAnswer) -> Spend:
    return Spend(role=role, model=answer.model, calls=answer.repairs + answer.lookups + 1,
                 usage=answer.usage,
                 exchange_ids=[answer.exchange_id], repairs=answer.repairs,
                 replayed=answer.replayed)


class Agents:
    """The agent roles; one instance per agents worker, sharing its model gateway.

    Args:
        gateway: the worker's model gateway (client, models per role, recordings).
        store: the artifact store upstream tasks' artifacts are previewed from (none: their
            paths, on this host).
        guides: where matched guideline skills are read from (None: no guidelines).
        guideline_tokens: tokens of a prompt the guidelines may take together.
        researcher: the documentation lookups offered to the coder and debuggers (None:
            none; their prompts stay as they were).
        profiles: the data files' profiles, read from ``store`` by digest (None: from
            ``store`` with the default bounds).
    """

    def __init__(self, gateway: ModelGateway, store: ArtifactStore | None = None, *,
                 guides: GuidelineSource | None = None,
                 guideline_tokens: int = GUIDELINE_TOKENS,
                 researcher: Helper | None = None,
                 environments: Sequence[str] = (),
                 profiles: DataProfiles | None = None) -> None:
        self.gateway = gateway
        self.environments = sorted(environments)
        """The named environments a coder's job may name (beside ``base``)."""
        self.store = store
        self.profiles = profiles if profiles is not None else DataProfiles(store)
        self.guides = guides
        self.guideline_tokens = guideline_tokens
        self.researcher = researcher
        self._writers = (JOB_CONTRACT, RESEARCHER) if researcher is not None else (JOB_CONTRACT,)

    @PLAN_GOAL.defn
    async def plan_goal(self, req: PlanRequest) -> PlanAnswer:
        """Draft a plan for a goal (or revise the previous draft with its feedback).

        A study's cycle is offered the schema with hypotheses (:class:`StudyPlanDraftOutput`);
        a run of its own the plain one, as it always was.
        """
        names = [d.name for d in req.data]
        tree = req.study.tree if req.study is not None else None
        contract = PlanDraftOutput if req.study is None else StudyPlanDraftOutput
        profiles = await asyncio.to_thread(self.profiles.of, req.data)
        reused = await asyncio.to_thread(reusable_previews, req.study, self.store) \
            if req.study is not None else {}
        got = await self._consult(req, "planner", contract,
                                  render.plan_message(req, profiles, reused),
                                  lambda out: convert.plan_draft(out, names, tree))
        return PlanAnswer(draft=got.value, spend=got.spend, guidelines=got.guidelines)

    @REVIEW_PLAN.defn
    async def review_plan(self, req: PlanReviewRequest) -> PlanReviewAnswer:
        """Judge a drafted plan against its goal and data (and, in a study, the study)."""
        profiles = await asyncio.to_thread(self.profiles.of, req.data)
        reused = await asyncio.to_thread(reusable_previews, req.study, self.store) \
            if req.study is not None else {}
        got = await self._consult(req, "plan_reviewer", PlanReviewOutput,
                                  render.plan_review_message(req, profiles, reused),
                                  convert.plan_review)
        return PlanReviewAnswer(review=got.value, spend=got.spend)

    @WRITE_JOB.defn
    async def write_job(self, req: CodeRequest) -> CodeAnswer:
        """Write a task's job (fast path), or rewrite a failed one (deep path)."""
        shown = await asyncio.to_thread(previews, req.upstream, self.store)
        shown |= await asyncio.to_thread(artifact_previews, req.reused, self.store)
        profiles = await asyncio.to_thread(self.profiles.of, req.data)
        text = render.code_message(req, shown, self.environments, profiles)
        got = await self._consult(req, "coder", JobOutput, text,
                                  lambda out: (out, convert.job_from_output(
                                      out, self.environments)),
                                  shared=self._writers, helper=self.researcher)
        out, job = got.value
        return CodeAnswer(job=job, reasoning=out.reasoning, confidence=out.confidence,
                          spend=got.spend, guidelines=got.guidelines)

    @REVIEW_JOB_MODEL.defn
    async def review_job_model(self, req: ModelReviewRequest) -> ModelReviewAnswer:
        """Add a model's judgement to one deterministic reviewer's verdict."""
        role = f"reviewer_{req.reviewer}"
        profiles = await asyncio.to_thread(self.profiles.of, req.review.inputs)
        got = await self._consult(req, role, ModelReviewOutput,
                                  render.review_message(req, profiles),
                                  lambda out: convert.model_verdict(req.reviewer, out, ""))
        verdict = got.value.model_copy(
            update={"details": {**got.value.details, "model": got.model}})
        return ModelReviewAnswer(verdict=verdict, spend=got.spend)

    @DEBUG_JOB.defn
    async def debug_job(self, req: DebugRequest) -> DebugAnswer:
        """Propose a fix for a failed job, or (diagnostic, first stage) a script to run."""
        role = f"debugger_{req.strategy}"
        text = render.debug_message(req)
        if req.strategy == "diagnostic" and req.diagnostic_output is None:
            diag = await self._consult(req, role, DiagnosticOutput, text,
                                       lambda out: (out, convert.diagnostic_job(req.job, out)),
                                       shared=self._writers, helper=self.researcher)
            script, job = diag.value
            return DebugAnswer(strategy=req.strategy, diagnostic_job=job,
                               diagnosis=script.purpose, spend=diag.spend,
                               guidelines=diag.guidelines)
        fix = await self._consult(req, role, DebugOutput, text,
                                  lambda out: (out, convert.fixed_job(req.job, out)),
                                  shared=self._writers, helper=self.researcher)
        out, job = fix.value
        return DebugAnswer(strategy=req.strategy, job=job, diagnosis=out.diagnosis,
                           confidence=out.confidence, spend=fix.spend,
                           guidelines=fix.guidelines)

    @SUMMARIZE_RUN.defn
    async def summarize_run(self, req: SummaryRequest) -> SummaryAnswer:
        """Answer the run's goal from its tasks' verified results."""
        shown = await asyncio.to_thread(previews, req.tasks, self.store)
        profiles = await asyncio.to_thread(self.profiles.of, req.data)
        text = render.summary_message(req, shown, profiles)
        if req.answer_format:  # only then: a goal naming none asks what it always did
            fmt = req.answer_format
            got = await self._consult(
                req, "output_processor", RunAnswerInFormat,
                message(text.rstrip(), format_section(fmt)),
                lambda out: checked(out, fmt, req.tasks))
        else:
            got = await self._consult(req, "output_processor", RunAnswer, text,
                                      lambda out: out)
        return SummaryAnswer(answer=got.value, spend=got.spend)

    @JUDGE_HYPOTHESIS.defn
    async def judge_hypothesis(self, req: JudgeRequest) -> JudgeAnswer:
        """Judge an answer against a gold hypothesis: context, variables, relationship."""
        got = await self._consult(req, "hypothesis_judge", JudgeOutput, judge_message(req),
                                  lambda out: out)
        return JudgeAnswer(judgement=got.value, spend=got.spend)

    @SYNTHESIZE_STUDY.defn
    async def synthesize_study(self, req: SynthesisRequest) -> SynthesisAnswer:
        """Write an ended study's answer, every statement citing its verified evidence.

        Every cycle's tasks are read again from its report, with more of their metrics than
        the study's state keeps (:func:`~activities.agents.synthesis.with_reports`).
        """
        state = await asyncio.to_thread(with_reports, req.state, self.store)
        req = req.model_copy(update={"state": state})
        got = await self._consult(req, "study_synthesizer", SynthesisOutput,
                                  synthesis_message(req),
                                  lambda out: synthesis_of(state, out))
        synthesis = got.value.model_copy(update={"model": got.model})
        return SynthesisAnswer(synthesis=synthesis, spend=got.spend)

    @REFLECT_FAILURE.defn
    async def reflect_failure(self, req: ReflectRequest) -> ReflectAnswer:
        """Propose a guarded job-spec patch for a failure the rule table cannot name."""
        got = await self._consult(req, "reflector", ReflectorOutput, reflect_message(req),
                                  lambda out: reflector_note(req, out))
        return ReflectAnswer(note=got.value, spend=got.spend)

    async def _consult(self, req: AgentRequest, role: str, contract: type[_O], text: str,
                       conversion: Callable[[_O], _R], *, shared: tuple[str, ...] = (),
                       helper: Helper | None = None) -> Consulted[_R]:
        """Ask ``role`` for a ``contract`` answer and convert it (repairing what fails)."""
        text, guided = await self._guided(req, text)
        family = role.split("_")[0] if role.startswith(("reviewer_", "debugger_")) else role
        call = ModelCall(
            run_id=req.run_id, task_id=req.task_id, role=role,
            system=system_prompt(role, *shared),
            messages=[ChatMessage(role="user", content=text)],
            output_schema_name=contract.__name__, output_schema=_schema(contract),
            max_tokens=MAX_TOKENS.get(family, 4096), budget=req.budget)

        def converted(output: dict[str, Any]) -> _R:
            return conversion(contract.model_validate(output))

        def vet(output: dict[str, Any]) -> str | None:
            try:
                converted(output)
            except ValueError as err:
                return convert.problem_of(err)
            return None

        answer = await self.gateway.ask(call, req.recording, vet=vet, helper=helper)
        spend = _spend(role, answer)
        try:
            value = converted(answer.output)
        except ValueError as err:  # the vet passed it, so only a changed converter gets here
            raise ApplicationError(
                f"the {role} answer cannot be used: {convert.problem_of(err)}",
                spent(answer.usage), type=ErrorType.INVALID_MODEL_OUTPUT,
                non_retryable=True) from None
        return Consulted(value=value, model=answer.model, spend=spend, guidelines=guided)

    async def _guided(self, req: AgentRequest, text: str) -> tuple[str, list[str]]:
        """``text`` with the request's guideline skills appended, and the ids that fit."""
        if not req.guidelines or self.guides is None:
            return text, []
        patterns = await self.guides.patterns([g.skill_id for g in req.guidelines])
        part, used = guidance_section(req.guidelines, patterns, self.guideline_tokens)
        return (f"{text.rstrip()}\n\n{part}\n" if part else text), used
