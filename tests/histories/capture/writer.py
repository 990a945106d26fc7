"""Capture the ``writer`` and ``reformulated`` histories: the skill writer's paths.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.writer``
captures these scenarios alone. ``writer.library``: a library whose ten outcomes came from
runs with a model asks the writer for each new pattern's text and the merge judge for each
undecided pair, and hands the answers to ``revise_skills``. ``reformulated``: a goal that
matched nothing is reformulated by the writer and matched again, and the skill found supplies
the plan. ``outcome_before_bounds.library``: a library without a model is sent a 100 KB outcome
(the one that, before the outcome bounds, went whole into an extraction), refuses it unread,
then learns from ten outcomes.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from temporalio.client import WorkflowHandle
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from tests.histories.capture import alone
from tests.workflows.agents_fakes import goal_agents, job, spend
from tests.workflows.harness import Harness
from workflows.agents.spend import Spend
from workflows.catalogue import (
    EXTRACT_SKILLS,
    JUDGE_MERGE,
    MAINTAIN_SKILLS,
    RECORD_OUTCOMES,
    REVISE_SKILLS,
    WRITE_SKILL,
)
from workflows.contracts.results import ResearchResult
from workflows.library.contracts import (
    TASK_FINISHED,
    ExtractAnswer,
    ExtractInput,
    LibraryState,
    MaintainAnswer,
    MaintainInput,
    MatchAnswer,
    MatchInput,
    RecordAnswer,
    SkillApplication,
    SkillUse,
    TaskOutcome,
)
from workflows.library.workflow import SkillLibraryWorkflow
from workflows.library.writing import (
    JudgeMergeAnswer,
    JudgeMergeRequest,
    MergeCandidate,
    MergeJudgementOutput,
    PatternBrief,
    ReformulateAnswer,
    ReformulateRequest,
    ReviseAnswer,
    ReviseInput,
    SkillWritingOutput,
    WriteSkillAnswer,
    WriteSkillRequest,
)
from workflows.research.workflow import ResearchWorkflow

WRITING = SkillWritingOutput(why_it_works="w", when_it_fails="f", description="d",
                             applicability="a", kind="skill", kind_reason="k")


def brief(skill_id: str) -> PatternBrief:
    """A pattern's brief with nothing but its id."""
    return PatternBrief(skill_id=skill_id, name=skill_id.split("@")[0])


class Recorder:
    """The library's activities and the writer's, recording what the workflow asked."""

    def __init__(self, *, fail_on: str = "") -> None:
        self.fail_on = fail_on
        self.briefs_asked: list[bool] = []
        self.written: list[str] = []
        self.judged: list[tuple[str, str]] = []
        self.revised: list[ReviseInput] = []

    @EXTRACT_SKILLS.defn
    async def extract(self, req: ExtractInput) -> ExtractAnswer:
        self.briefs_asked.append(req.briefs)
        made = ["p@v1", "q@v1"]
        return ExtractAnswer(created=made, briefs=[brief(m) for m in made] if req.briefs else [])

    @MAINTAIN_SKILLS.defn
    async def maintain(self, req: MaintainInput) -> MaintainAnswer:
        pairs = [MergeCandidate(first=brief("a@v1"), second=brief(f"{x}@v1"), similarity=0.83)
                 for x in ("b", "c")]
        return MaintainAnswer(scored=4, undecided=pairs)

    @RECORD_OUTCOMES.defn
    async def record(self, outcomes: list[TaskOutcome]) -> RecordAnswer:
        return RecordAnswer(recorded=len(outcomes))

    @WRITE_SKILL.defn
    async def write_skill(self, req: WriteSkillRequest) -> WriteSkillAnswer:
        if req.pattern.skill_id == self.fail_on:
            raise ApplicationError("the model refused to answer", type="ModelRefused",
                                   non_retryable=True)
        self.written.append(req.pattern.skill_id)
        return WriteSkillAnswer(skill_id=req.pattern.skill_id, writing=WRITING,
                                spend=Spend(role="skill_writer"))

    @JUDGE_MERGE.defn
    async def judge_merge(self, req: JudgeMergeRequest) -> JudgeMergeAnswer:
        pair = (req.pair.first.skill_id, req.pair.second.skill_id)
        self.judged.append(pair)
        agreed = pair[1] == "b@v1"
        verdict = MergeJudgementOutput(
            same_subtask=agreed, compatible_steps=True, overlapping_contexts=True, merge=agreed,
            reason="r", description="m" if agreed else "", applicability="m" if agreed else "")
        return JudgeMergeAnswer(first=pair[0], second=pair[1], judgement=verdict,
                                spend=Spend(role="merge_judge"))

    @REVISE_SKILLS.defn
    async def revise(self, req: ReviseInput) -> ReviseAnswer:
        self.revised.append(req)
        return ReviseAnswer(written=[w.skill_id for w in req.writings],
                            merged={m.second: m.first for m in req.merges})


async def learned(handle: WorkflowHandle[Any, Any], keys: list[str]) -> dict[str, Any]:
    """The library's state once every one of ``keys`` has been learned from (queried)."""
    for _ in range(1000):
        if not await handle.query(SkillLibraryWorkflow.unlearned, keys):
            state: dict[str, Any] = await handle.query(SkillLibraryWorkflow.state)
            if state["finished"] >= len(keys):
                return state
    raise AssertionError(f"the library did not learn from {keys}")


def outcome(n: int, writer: str | None) -> TaskOutcome:
    """A finished task from a run whose agents queue is ``writer`` (None: no model)."""
    return TaskOutcome(run_id="run", task_id=f"t{n}", action="Describe the table",
                       status="completed", writer_queue=writer)


async def run_library(env: WorkflowEnvironment, rec: Recorder, *, model: bool,
                      oversize: bool = False) -> tuple[dict[str, Any], str]:
    """Ten outcomes into a library served by ``rec``; its state once learned, and its id.

    With ``oversize``, a 100 KB outcome is sent first (the library refuses it unread).
    """
    queue = f"skills-{uuid.uuid4().hex[:8]}"
    agents = f"{queue}-agents"
    library = [rec.extract, rec.maintain, rec.record, rec.revise]
    async with Worker(env.client, task_queue=queue, workflows=[SkillLibraryWorkflow],
                      activities=library), \
            Worker(env.client, task_queue=agents, activities=[rec.write_skill, rec.judge_merge]):
        handle = await env.client.start_workflow(
            SkillLibraryWorkflow.run, LibraryState(), id=f"lib-{queue}", task_queue=queue)
        batch = [outcome(n, agents if model else None) for n in range(10)]
        if oversize:
            await handle.signal(TASK_FINISHED, batch[0].model_copy(
                update={"task_id": "big", "action": "x" * 100_000}))
        for item in batch:
            await handle.signal(TASK_FINISHED, item)
        state = await learned(handle, [o.key for o in batch])
        await handle.terminate()
    return state, f"lib-{queue}"


GOAL = "Wie hoch ist der Durchschnitt je Gruppe?"
QUERY = "Mean value per group of a measurements table"


class Reformulating:
    """A library that matches only the reformulated query, and the writer that gives it."""

    def __init__(self, *, refuse: bool = False) -> None:
        self.refuse = refuse
        self.asked: list[str | None] = []
        self.reformulated: list[str] = []

    async def match_skills(self, req: MatchInput) -> MatchAnswer:
        self.asked.append(req.goal)
        if req.goal != QUERY:
            return MatchAnswer(reasons={"goal": "no skill above similarity 0.35 among 1 indexed"},
                               unmatched=["goal"])
        use = SkillUse(skill_id="group-means@v1", name="group-means", version=1,
                       confidence=0.9, similarity=0.8, expected_artifacts=["out.txt"],
                       expected_metrics=["score"], rationale="skill group-means@v1")
        return MatchAnswer(applications=[SkillApplication(
            task_id="skill-1", use=use, job=job("ok"), action="group means",
            acceptance_criteria=["means written"])])

    async def reformulate_query(self, req: ReformulateRequest) -> ReformulateAnswer:
        self.reformulated.append(req.text)
        if self.refuse:
            raise ApplicationError("the model refused to answer", type="ModelRefused",
                                   non_retryable=True)
        return ReformulateAnswer(query=QUERY, spend=spend("query_reformulator"))


async def run_reformulated(env: WorkflowEnvironment, root: Path,
                           library: Reformulating) -> ResearchResult:
    """A goal run with a model whose words match nothing until the writer rewrites them."""
    agents = goal_agents()
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root, overrides={
        **agents.overrides(), "match_skills": library.match_skills,
        "reformulate_query": library.reformulate_query})
    req = harness.goal_request(GOAL, agents={"enabled": True}, skills={"enabled": True})
    async with harness.worker():
        return await env.client.execute_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                 task_queue=harness.queue)


async def capture_alone() -> None:
    """Run these scenarios alone and save their histories."""
    from tests.histories.capture.all import save, save_one

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        _, library = await run_library(env, Recorder(), model=True)
        await save_one(env, "writer.library", library)
        _, bounded = await run_library(env, Recorder(), model=False, oversize=True)
        await save_one(env, "outcome_before_bounds.library", bounded)
        await save(env, "reformulated", await run_reformulated(env, root, Reformulating()))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
