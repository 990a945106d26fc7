"""Capture the ``study_cycle`` histories: a goal run that is a cycle of a study.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.study_cycle``
captures this scenario alone (the other saved histories stay as they are). The run is given a
study's context; memory is asked for the planner's notes (``recall_memory``); the planner's
first draft links a task to an unknown hypothesis and goes back with the problem; the second
proposes H3 and links a task of the study's tree by id. The fakes here are also the time-
skipping tests' (``research/test_study_planning``).
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from pathlib import Path
from typing import Any

from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from activities.study.cycles import StudyCycles
from tests.histories.capture import alone
from tests.workflows.agents_fakes import FakeAgents, job, probe_environment
from tests.workflows.harness import Harness
from tests.workflows.study.factories import hypothesis, outcome, report, result, summary, tree
from workflows.agents.roles import DataFile, PlanDraftOutput, StudyPlanDraftOutput
from workflows.contracts.execution import Artifact
from workflows.contracts.recall import RecallAnswer, RecallInput
from workflows.contracts.results import ResearchInput, ResearchResult
from workflows.contracts.study import CycleDecision, StudyContext
from workflows.research.workflow import ResearchWorkflow

DATA = [DataFile(name="table.csv", path="/data/table.csv", sha256="a" * 64, size=10)]
RULE = "rule sem-0123456789 for tasks like 'fit-model': batch_size at most 16"


def study() -> StudyContext:
    return StudyContext(
        study_id="study-1", cycle=2,
        tree=tree(hypothesis("H1"), hypothesis("H2", "H1", status="refuted", decided_in=1)),
        previous=[summary(1, outcome("fit", hypothesis="H2", auc=0.61))],
        decision=CycleDecision(action="pivot", pursue="H3", hypotheses=["H2"],
                               reason="H2 was refuted: auc 0.61 < 0.8"))


def draft(links: dict[str, str | None], *hypotheses: dict[str, Any]) -> PlanDraftOutput:
    tasks = [{"task_id": t, "action": f"do {t}", "acceptance_criteria": ["done"],
              "hypothesis": h} for t, h in links.items()]
    answer = StudyPlanDraftOutput.model_validate({"tasks": tasks,
                                                  "hypotheses": list(hypotheses)})
    return PlanDraftOutput.model_validate(answer.model_dump())


H3 = {"id": "H3", "parent": "H1", "statement": "boosting reaches 0.8",
      "test": {"metric": "auc", "op": ">=", "threshold": 0.8}}


class FakeRecall:
    """``recall_memory`` answering one rule, or failing; every request is kept."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.requests: list[RecallInput] = []

    async def recall_memory(self, req: RecallInput) -> RecallAnswer:
        self.requests.append(req)
        if self.fail:
            raise ApplicationError("memory store down", non_retryable=True)
        return RecallAnswer(notes=[RULE], rules=["sem-0123456789"])


async def run(env: WorkflowEnvironment, queue: str, root: Path, fakes: FakeAgents,
              recall: FakeRecall, study_: StudyContext | None = None,
              extra: list[Any] | None = None, **policy: Any) -> tuple[Harness, ResearchResult]:
    harness = Harness(env, queue, root, extra=[probe_environment, *(extra or [])],
                      overrides={**fakes.overrides(), "recall_memory": recall.recall_memory})
    policy.setdefault("agents", {"enabled": True, "plan_review_rounds": 1})
    req: ResearchInput = harness.goal_request("Does boosting beat the baseline?", DATA,
                                              **policy)
    req = req.model_copy(update={"study": study_})
    async with harness.worker():
        return harness, await env.client.execute_workflow(
            ResearchWorkflow.run, req, id=req.run_id, task_queue=harness.queue)




def cycle_agents() -> FakeAgents:
    """A first draft linking an unknown hypothesis, then one proposing H3 and linking H2."""
    return FakeAgents(drafts=[draft({"boost": "H9"}, H3),
                              draft({"boost": "H3", "refit": "H2"}, H3)],
                      jobs={"fast": job("ok")})


async def run_study_cycle(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The study_cycle scenario (see the module's docstring)."""
    _, result = await run(env, f"capture-{uuid.uuid4().hex[:8]}", root, cycle_agents(),
                          FakeRecall(), study())
    return result


async def run_study_reuse(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The study_reuse scenario: the planner's task reuses cycle 1's ``fit`` (``c1.fit``),
    resolved by ``resolve_reuse`` from cycle 1's report before the plan runs."""
    made = root / "out.txt"
    made.write_text("fit\n")
    earlier = report([result("fit", artifacts=[Artifact(
        name="out.txt", size=4, path=str(made), sha256=hashlib.sha256(b"fit\n").hexdigest())])])
    (root / "cycle-1.json").write_text(earlier.model_dump_json())
    context = study().model_copy(update={"previous": [summary(
        1, outcome("fit", hypothesis="H2", auc=0.61)).model_copy(
        update={"results_json": str(root / "cycle-1.json")})]})
    boost = {"task_id": "boost", "action": "do boost", "acceptance_criteria": ["done"],
             "hypothesis": "H3", "reuse": ["c1.fit"]}
    answer = StudyPlanDraftOutput.model_validate({"tasks": [boost], "hypotheses": [H3]})
    fakes = FakeAgents(drafts=[PlanDraftOutput.model_validate(answer.model_dump())],
                       jobs={"fast": job("ok")})
    harness, result_ = await run(env, f"capture-{uuid.uuid4().hex[:8]}", root, fakes,
                                 FakeRecall(), context, extra=[StudyCycles().resolve_reuse])
    assert result_.status == "completed", result_.status_reason
    assert harness.sandbox.deps_seen["boost"] == ["c1.fit/out.txt"]
    return result_


async def capture_alone() -> None:
    """Run these scenarios alone and save their histories."""
    from tests.histories.capture.all import save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save(env, "study_cycle", await run_study_cycle(env, root))
        reuse = root / "reuse"
        reuse.mkdir()
        await save(env, "study_reuse", await run_study_reuse(env, reuse))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
