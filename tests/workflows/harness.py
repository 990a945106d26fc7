"""Running real workflows on the time-skipping server with a fake sandbox.

Reviewers, reflection, evidence and rescanning are the real activities (they are pure or
work on files); only ``execute_job`` is replaced, by a fake that writes real files to
order, so each pipeline path can be driven deterministically and fast.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker, WorkflowRunner

from activities.artifacts.store import LocalArtifactStore
from activities.common.turns import pass_turn
from activities.evidence.relink import Relinker
from activities.evidence.verify import EvidenceVerifier
from activities.memory.memory import Memory
from activities.memory.recall import Recall
from activities.reflection.reflection import Reflection
from activities.review.infra import InfrastructureReviewer
from activities.review.panel import review_ops, review_quality_safety
from skills.library import SkillLibrary
from tests.support.fakes import EventSink, LearnerSink, ReportSink, fake_activity
from workflows.constants import run_workflow_id
from workflows.contracts.base import build_models
from workflows.contracts.errors import ErrorType
from workflows.contracts.execution import Artifact, ExecuteJobInput, ExecutionOutcome
from workflows.contracts.plan import Plan
from workflows.contracts.policy import Queues, RunPolicy
from workflows.contracts.reflector import ReflectAnswer, ReflectRequest
from workflows.contracts.results import ResearchInput, ResearchResult, RunReport, TaskResult
from workflows.contracts.roles import DataFile
from workflows.research.batch import TaskBatchWorkflow
from workflows.research.branch import BranchWorkflow
from workflows.research.workflow import ResearchWorkflow
from workflows.study.workflow import StudyWorkflow
from workflows.task.workflow import TaskWorkflow

with workflow.unsafe.imports_passed_through():  # test modules that import this define workflows
    from workers.pools.runner import workflow_runner


def task(tid: str, *, deps: list[str] | None = None, behave: str = "ok",
         priority: str = "MEDIUM", job: bool = True, checks: list[dict[str, Any]] | None = None,
         code: str = "print('hi')\n", **args: Any) -> dict[str, Any]:
    """A plan decision whose (fake) job behaves as ``behave`` says."""
    spec: dict[str, Any] = {
        "task_id": tid, "priority": priority, "action": f"task {tid}",
        "acceptance_criteria": ["it works"], "dependencies": deps or [],
        "checks": checks or [],
    }
    if job:
        spec["job"] = {"code": code, "source": code, "filename": "job.py",
                       "args": {"behave": behave, **args}, "expected_artifacts": ["out.txt"],
                       "expected_metrics": ["score"]}
    return spec


def all_on(queue: str) -> Queues:
    """Every pool on one task queue (one test worker serves them all)."""
    return Queues(orchestration=queue, agents=queue, sandbox=queue, reflection=queue,
                  skills=queue)


class FakeSandbox:
    """Writes real files per behaviour into per-attempt workspaces; records what ran."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = LocalArtifactStore(root / "store")
        """Where the artifacts go, as the real sandbox puts them (verification reads here)."""
        self.ran: list[str] = []
        self.args_seen: list[dict[str, Any]] = []
        self.deps_seen: dict[str, list[str]] = {}

    async def execute(self, req: ExecuteJobInput) -> ExecutionOutcome:
        self.ran.append(req.task_id)
        self.args_seen.append(dict(req.job.args))
        self.deps_seen[req.task_id] = [f"{d.task_id}/{d.name}" for d in req.dependency_artifacts]
        workspace = self.root / req.run_id / req.task_id / f"attempt-{len(self.ran)}"
        workspace.mkdir(parents=True)
        behave = str(req.job.args.get("behave") or _marker(req.job.source, "behave") or "ok")
        if behave == "diagnose":
            return ExecutionOutcome(outcome="succeeded", exit_code=0, workspace=str(workspace),
                                    stdout_tail=f"diagnosis from {workspace}: column 'x' missing")
        if behave == "crash" or (behave == "crash_once" and self.ran.count(req.task_id) == 1):
            return ExecutionOutcome(outcome="nonzero_exit", exit_code=1, reason="exit code 1",
                                    workspace=str(workspace))
        if behave.startswith("oom_above:") and int(req.job.args["batch_size"]) > int(
                behave.split(":")[1]):
            written = req.job.args.get("oom_score")  # what it wrote before running out
            return ExecutionOutcome(outcome="out_of_memory", exit_code=1, workspace=str(workspace),
                                    reason="MemoryError: the job ran out of memory",
                                    stderr_tail="MemoryError", metrics={} if written is None else
                                    {"score": _estimate(float(written), req.job.args.get("ci"))})
        artifacts: list[Artifact] = []
        if behave == "misplaced":
            (workspace / "sub").mkdir()
            (workspace / "sub" / "out.txt").write_text(f"result of {req.task_id}")
        elif behave != "no_artifact":
            path = workspace / "out.txt"
            path.write_text(f"result of {req.task_id}")
            self.store.put(path)
            artifacts.append(Artifact(name="out.txt", size=path.stat().st_size, path=str(path),
                                      sha256=hashlib.sha256(path.read_bytes()).hexdigest()))
        score = float(req.job.args.get("score") or _marker(req.job.source, "score") or 0.9)
        return ExecutionOutcome(outcome="succeeded", exit_code=0, artifacts=artifacts,
                                metrics={"score": _estimate(score, req.job.args.get("ci"))},
                                workspace=str(workspace))


async def no_reflector(req: ReflectRequest) -> ReflectAnswer:
    """The reflector role unless a test scripts one: it gives no answer, at once."""
    raise ApplicationError(f"no reflector is scripted for task {req.task_id}",
                           type=ErrorType.MODEL_NOT_CONFIGURED, non_retryable=True)


def _estimate(score: float, half: Any) -> Any:
    """``score``, or with a ``ci`` argument the estimate ``score ± ci`` at 95 %."""
    if half is None:
        return score
    low, high = round(score - float(half), 6), round(score + float(half), 6)
    return {"value": score, "ci": [low, high], "level": 0.95, "n": 100, "method": "bootstrap"}


def _marker(source: str | None, name: str) -> str | None:
    """The value of a ``# name: value`` line in a job's code (how fake jobs say what to do)."""
    found = re.search(rf"^# {name}: (\S+)$", source or "", re.MULTILINE)
    return found.group(1) if found else None


class Harness:
    """One worker serving every queue with real activities and the fake sandbox."""

    def __init__(self, env: WorkflowEnvironment, queue: str, root: Path, *,
                 overrides: dict[str, Callable[[Any], Awaitable[Any]]] | None = None,
                 extra: list[Callable[..., Any]] | None = None,
                 workflows: list[type] | None = None, large: bool = False,
                 runner: WorkflowRunner | None = None) -> None:
        """``overrides`` replaces activities by name (e.g. a reflection that is unsure);
        ``extra`` adds activities already defined (``@activity.defn``). ``large`` (a run of
        thousands of tasks) keeps only the ids of the events and outcomes recorded
        (``EventSink``) and settles the heap as a pool's worker process does
        (``workers.pools.heap``)."""
        self.large = large
        build_models()  # as a pool's worker does as it starts (workers/pools/builders.py)
        self.runner = runner or workflow_runner(env.client.data_converter)
        """The workflows' runner: a pool's own (``workers.pools.runner``) unless given."""
        self.env, self.queue, self.root = env, queue, root
        self.overrides = overrides or {}
        self.extra = extra or []
        self.workflows = workflows or []
        self.sandbox, self.reports = FakeSandbox(root), ReportSink()
        self.sink = EventSink(keep=not large)
        self.learner = LearnerSink(keep=not large)
        self.result: ResearchResult | None = None
        """The workflow's result of the last :meth:`run`."""
        self.memory = Memory(None)  # workflow tests run without memory (tests/test_memory_*)
        self.skills = SkillLibrary(None)  # nor a skill library (tests/e2e/test_skills_e2e.py)

    def request(self, decisions: list[dict[str, Any]], **policy: Any) -> ResearchInput:
        plan = Plan.model_validate({"decisions": decisions})
        policy.setdefault("skills", {"enabled": False})  # skills: tests/workflows/test_skills.py
        run_id = run_workflow_id("test", uuid.uuid4().hex)
        return ResearchInput(run_id=run_id, plan_name="test", plan_sha256="0" * 64, plan=plan,
                             queues=all_on(self.queue), policy=RunPolicy.model_validate(policy))

    def goal_request(self, goal: str, data: list[DataFile] | None = None,
                     **policy: Any) -> ResearchInput:
        """A goal run (no plan) with ``data`` files."""
        policy.setdefault("skills", {"enabled": False})
        run_id = run_workflow_id("goal", uuid.uuid4().hex)
        return ResearchInput(run_id=run_id, plan_name="goal-test", plan_sha256="1" * 64,
                             goal=goal, data=data or [], queues=all_on(self.queue),
                             policy=RunPolicy.model_validate(policy))

    @asynccontextmanager
    async def worker(self) -> AsyncGenerator[Worker, None]:
        activities: dict[str, Callable[..., Any]] = {
            "execute_job": fake_activity("execute_job", self.sandbox.execute),
            "verify_evidence": EvidenceVerifier(self.sandbox.store).verify_evidence,
            "review_ops": review_ops,
            "review_quality_safety": review_quality_safety,
            "diagnose_failure": Reflection(None, None).diagnose_failure,
            "consult_memory": self.memory.consult_memory,
            "remember_task": self.memory.remember_task,
            "remember_tasks": self.memory.remember_tasks,
            "recall_memory": Recall(None).recall_memory,
            "match_skills": self.skills.match_skills,
            "review_infrastructure": InfrastructureReviewer(self.root).review_infrastructure,
            "rescan_artifacts": Relinker(self.root, self.sandbox.store).rescan_artifacts,
            "record_events": self.sink.activity(), "write_report": self.reports.activity(),
            "write_task_report": self.reports.task_activity(),
            "hand_off_outcome": self.learner.activity(), "pass_turn": pass_turn,
            "reflect_failure": fake_activity("reflect_failure", no_reflector)}
        activities.update({name: fake_activity(name, fn) for name, fn in self.overrides.items()})
        worker = Worker(self.env.client, task_queue=self.queue,
                        workflows=[ResearchWorkflow, BranchWorkflow, TaskWorkflow, StudyWorkflow,
                                   TaskBatchWorkflow, *self.workflows],
                        activities=[*activities.values(), *self.extra],
                        workflow_runner=self.runner,
                        workflow_failure_exception_types=[Exception])
        async with worker:
            yield worker

    async def run(self, decisions: list[dict[str, Any]], **policy: Any) -> RunReport:
        """Run a plan and return its report (the workflow's own result: ``self.result``)."""
        req = self.request(decisions, **policy)
        async with self.worker():
            self.result = await self.env.client.execute_workflow(
                ResearchWorkflow.run, req, id=req.run_id, task_queue=self.queue)
        return self.report_of(self.result)

    def report_of(self, result: ResearchResult) -> RunReport:
        """The report ``result``'s run asked to write: every task's result, as the run had it.

        A run whose report was not written gets one made of its result (status and reason).
        """
        last = self.reports.last
        if last is not None and last.report.run_id == result.run_id:
            return last.report.model_copy(update={"report": result.report})
        return RunReport(**result.run_fields(), tasks=[
            TaskResult(task_id=t.task_id, priority=t.priority, action=t.action,
                       status=t.status, status_reason=t.status_reason) for t in result.tasks])

