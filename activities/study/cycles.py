"""A study's cycle activities: ``close_cycle`` and ``resolve_reuse``.

``close_cycle`` gives the study's state after one cycle, from the cycle's report;
``resolve_reuse`` the earlier cycles' verified artifacts a cycle's plan reads.

The run's results JSON holds every task's verified metrics, checks and the plan with its
hypotheses. It is read from this host's disk, else from the artifact store by the digest its
writer recorded (an orchestration worker on another host wrote it). A report that cannot be
read either way (a run that wrote none, a store that lost it) is replaced by the run's own
result, which has each task's status and reason: its hypotheses are then judged
``inconclusive`` and its tasks carried forward, never lost.
A cycle whose plan contradicts the study's hypothesis tree is refused with a clear,
non-retryable error.
"""

from __future__ import annotations

import asyncio

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.artifacts.store import ArtifactStore
from activities.learning.settle import wait_learned
from activities.reports.reading import read_report, result_report
from workflows.catalogue import CLOSE_CYCLE, RESOLVE_REUSE
from workflows.contracts.cycles import CloseCycleInput, ResolveReuseInput
from workflows.contracts.errors import ErrorType
from workflows.contracts.execution import DependencyArtifact
from workflows.contracts.plan import cycle_ref
from workflows.contracts.results import ResearchResult, RunReport, outline_report
from workflows.contracts.study import StudyState
from workflows.study.carry import close_cycle as close


def cycle_report(result: ResearchResult, store: ArtifactStore | None = None) -> RunReport:
    """The cycle's report as its results JSON has it, else as its result says."""
    found = result_report(result, store)
    return found if found is not None else outline_report(result)


LEARNING_WAIT_S = 20.0
"""How long a closing cycle waits for the learner to learn from its tasks."""


class StudyCycles:
    """The cycle activities, reading cycle reports from this host or the artifact store.

    Args:
        store: where report writers put results JSONs (None: this host's disk only).
    """

    def __init__(self, store: ArtifactStore | None = None) -> None:
        self.store = store

    @CLOSE_CYCLE.defn
    async def close_cycle(self, req: CloseCycleInput) -> StudyState:
        """Judge the cycle's hypotheses, decide by the rules and record the cycle."""
        report = await asyncio.to_thread(cycle_report, req.result, self.store)
        await _await_learning(req, [f"{req.result.run_id}/{t.task_id}" for t in report.tasks])
        if report.plan is None:
            report = report.model_copy(update={"plan": req.plan})
        try:
            state = close(req.state, report)
        except ValueError as err:
            raise ApplicationError(f"cycle {req.state.cycles + 1} ({req.result.run_id}): {err}",
                                   type=ErrorType.INVALID_PLAN, non_retryable=True) from err
        paths = req.result.report
        latest = state.summaries[-1].model_copy(update={
            "results_json": paths.results_json if paths else "",
            "results_sha256": paths.results_sha256 if paths else ""})
        return state.model_copy(update={"summaries": [*state.summaries[:-1], latest]})

    @RESOLVE_REUSE.defn
    async def resolve_reuse(self, req: ResolveReuseInput) -> list[DependencyArtifact]:
        """Each referenced earlier task's verified artifacts, named by the reference.

        Raises:
            ApplicationError: ``InvalidPlan``, non-retryable: a cycle that has not run, a
                report that cannot be read, a task that the cycle did not complete.
        """
        return await asyncio.to_thread(_resolve, req, self.store)


async def _await_learning(req: CloseCycleInput, keys: list[str]) -> None:
    """Wait (bounded) until the learner has learned from the cycle's tasks.

    An activity run with no client (a test's activity environment) has no learner to ask.
    """
    try:
        client = activity.client()
    except RuntimeError:
        return
    unlearned = await wait_learned(client, req.skills_queue, keys, limit_s=LEARNING_WAIT_S)
    if unlearned:
        activity.logger.warning("the learner had not learned from %s after %.0f s; the study "
                                "goes on", ", ".join(unlearned), LEARNING_WAIT_S)


def _resolve(req: ResolveReuseInput, store: ArtifactStore | None) -> list[DependencyArtifact]:
    found: list[DependencyArtifact] = []
    problems: list[str] = []
    for ref in sorted(set(req.refs)):
        cycle, task_id = cycle_ref(ref)
        path = req.reports.get(cycle)
        if path is None:
            problems.append(f"{ref}: cycle {cycle} has not run in this study")
            continue
        report = read_report(path, req.digests.get(cycle, ""), store)
        if report is None:
            problems.append(f"{ref}: the report of cycle {cycle} cannot be read here ({path})")
            continue
        task = next((t for t in report.tasks if t.task_id == task_id), None)
        if task is None or task.status != "completed":
            how = "has no such task" if task is None else f"ended {task.status}"
            problems.append(f"{ref}: task {task_id} of cycle {cycle} {how}; only a completed "
                            "task's verified artifacts are reused")
            continue
        found += [DependencyArtifact(task_id=ref, name=a.name, path=a.path, sha256=a.sha256)
                  for a in task.artifacts]
    if problems:
        raise ApplicationError("cannot reuse " + "; ".join(problems),
                               type=ErrorType.INVALID_PLAN, non_retryable=True)
    return found
