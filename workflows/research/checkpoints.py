"""A run's named checkpoints: its state point kept under a name, read from its own state.

A person names one with the ``checkpoint`` update (:meth:`Checkpoints.name`); a task's
failure and each gate a person approved name one by themselves (:meth:`Checkpoints.finished`,
:meth:`Checkpoints.plan_approved`; guarded by the ``named-checkpoints`` patch), the latest
:data:`AUTO_KEPT` kept; with ``policy.checkpoint_every_min`` the run names ``periodic:N`` at
the first task to end after each interval of workflow time (between two task ends its state
does not change, so a save in between would repeat the last), the latest :data:`AUTO_KEPT`
of them kept apart. A checkpoint keeps the results of the tasks finished by then (the
objects the run held, artifacts and all), so a branch ``from_checkpoint`` reuses them as they
were (:meth:`Checkpoints.view`) even after a kept line replaced them. Nothing is stored
anywhere but the workflow's state and history. Deterministic workflow code only.
"""

from __future__ import annotations

from dataclasses import replace

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.branching.requests import BranchRefusedError, RunView
    from workflows.contracts.base import BY_CHARS, Channel
    from workflows.contracts.branches import CheckpointPhase
    from workflows.contracts.checkpoints import (
        AUTO_KEPT,
        MAX_NAMED,
        TASKS_SHOWN,
        Checkpoint,
        CheckpointKind,
        CheckpointList,
        CheckpointRequest,
    )
    from workflows.contracts.gates import GateRecord
    from workflows.contracts.plaintext import clip
    from workflows.contracts.results import TaskResult
    from workflows.patches import CHECKPOINTS_PATCH
    from workflows.research.state import RunState

KNOWN_SHOWN = 20
"""The most names a refusal lists."""
ENDED = ("report", "done")
"""Run phases in which the run's state no longer changes: nothing is named then."""


class CheckpointRefusedError(ValueError):
    """A checkpoint name the run will not take, or one it does not know; says why."""


class Checkpoints:
    """The named checkpoints of one run.

    Args:
        state: the run's state (its plan, order, results and phase).
    """

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.points: dict[str, Checkpoint] = {}
        self.kept: dict[str, dict[str, TaskResult]] = {}
        """Each checkpoint's finished tasks' results, as they were when it was named."""
        self.dropped = 0
        self._auto: bool | None = None
        self._periodic = 0
        """Periodic checkpoints named so far (the next is ``periodic:<this + 1>``)."""

    def name(self, req: CheckpointRequest) -> Checkpoint:
        """Name the run's state now ``req.name``, for ``req.by``.

        Raises:
            CheckpointRefusedError: the run has ended, the name is taken, too many were
                named, or the branch point is not one of the plan's tasks.
        """
        state = self.state
        if state.phase in ENDED or state.cancelling:
            raise CheckpointRefusedError(
                f"run {state.req.run_id} is ending ({state.phase}): its state no longer "
                "changes; branch from one of its checkpoints or its tasks instead")
        if req.name in self.points:
            raise CheckpointRefusedError(f"checkpoint {req.name!r} is already taken (named by "
                                         f"{self.points[req.name].by}); choose another name")
        named = sum(1 for p in self.points.values() if p.kind == "manual")
        if named >= MAX_NAMED:
            raise CheckpointRefusedError(f"a run holds at most {MAX_NAMED} named checkpoints "
                                         "and this one has them all")
        if req.task is not None and (state.plan is None or req.task not in state.plan.by_id()):
            known = ", ".join(state.order[:KNOWN_SHOWN]) or "none yet"
            raise CheckpointRefusedError(f"unknown task {req.task!r} (the plan's tasks: "
                                         f"{known})")
        task = req.task or next((t for t in state.order if t not in state.results), None)
        return self._mark(req.name, "manual", req.by, task, req.phase, comment=req.comment,
                          channel=req.channel)

    def finished(self, result: TaskResult) -> None:
        """A task ended: name its failure and each of its gates a person approved."""
        failed = result.status == "failed"
        approved = [g for g in result.provenance.approvals
                    if g.status in ("approved", "modified") and g.by]
        if (failed or approved) and self._enabled():
            tid = result.task_id
            phase: CheckpointPhase = "execute" if result.job is not None else "planned"
            for gate in approved:
                self._mark(f"approval:{gate.gate}:{tid}", "approval", gate.by or "", tid, phase)
            if failed:
                n = 1 + sum(1 for p in self.points if p.startswith(f"error:{tid}:"))
                self._mark(f"error:{tid}:{n}", "error", "assay", tid, phase,
                           comment=clip(result.status_reason, 300))
        self.periodic()

    def periodic(self) -> None:
        """Name ``periodic:N`` if an interval of ``policy.checkpoint_every_min`` has passed.

        Intervals are counted from the run's start in workflow time; a task ending after
        several of them names one checkpoint, numbered by the intervals passed (so the names
        say when: ``periodic:3`` is the state after 3 intervals).
        """
        every = self.state.req.policy.checkpoint_every_min
        if not every:
            return
        passed = (workflow.now() - workflow.info().start_time).total_seconds() / (every * 60)
        if int(passed) <= self._periodic or not self._enabled():
            return
        self._periodic = int(passed)
        task = next((t for t in self.state.order if t not in self.state.results), None)
        self._mark(f"periodic:{self._periodic}", "periodic", "assay", task, "planned",
                   comment=f"every {every:g} min")

    def plan_approved(self, gates: list[GateRecord]) -> None:
        """The plan gate a person approved names ``approval:plan:run``."""
        gate = next((g for g in gates if g.gate == "plan" and g.by
                     and g.status in ("approved", "modified")), None)
        if gate is not None and self._enabled():
            first = self.state.order[0] if self.state.order else None
            self._mark("approval:plan:run", "approval", gate.by or "", first, "planned")

    def view(self, name: str, view: RunView) -> RunView:
        """``view`` with the tasks finished at checkpoint ``name`` as they were then.

        Raises:
            BranchRefusedError: the run has no checkpoint of that name (the known ones said).
        """
        if name not in self.points:
            known = ", ".join(list(self.points)[-KNOWN_SHOWN:]) or "none yet"
            raise BranchRefusedError(f"unknown checkpoint {name!r} (the run's checkpoints: "
                                     f"{known}; `assay checkpoints RUN` lists them)")
        return replace(view, results={**view.results, **self.kept[name]})

    def listing(self) -> CheckpointList:
        """The ``checkpoints`` query's answer, and the report's section."""
        return CheckpointList(run_id=self.state.req.run_id,
                              checkpoints=list(self.points.values()), dropped=self.dropped)

    def _enabled(self) -> bool:
        """Whether the run names its own checkpoints (runs begun before it do not)."""
        if self._auto is None:
            self._auto = workflow.patched(CHECKPOINTS_PATCH)
        return self._auto

    def _mark(self, name: str, kind: CheckpointKind, by: str, task: str | None,
              phase: CheckpointPhase, *, comment: str = "",
              channel: Channel | None = None) -> Checkpoint:
        state = self.state
        if name in self.points:  # a gate approved again: the latest state is the one named
            del self.points[name]
        results = dict(state.results)
        point = Checkpoint(
            name=name, kind=kind, by=clip(by, BY_CHARS), comment=comment, channel=channel,
            at=workflow.now(), run_phase=state.phase, from_task=task, from_phase=phase,
            tasks={t: r.status for t, r in list(results.items())[-TASKS_SHOWN:]},
            finished=len(results),
            artifacts=sum(len(r.artifacts) for r in results.values()))
        self.points[name], self.kept[name] = point, results
        if kind != "manual":
            self._bound(kind)
        state.log.add("checkpoint", "info", status=kind, agent=point.by,
                      inputs={"name": name, "from": f"{task}:{phase}" if task else None},
                      outputs={"tasks": len(point.tasks), "artifacts": point.artifacts})
        return point

    def _bound(self, kind: CheckpointKind) -> None:
        """Keep the latest :data:`AUTO_KEPT` automatic checkpoints; count the others.

        Periodic ones are kept apart: a long run's cannot push out its errors and approvals.
        """
        auto = [n for n, p in self.points.items()
                if p.kind != "manual" and (p.kind == "periodic") == (kind == "periodic")]
        for old in auto[:-AUTO_KEPT] if len(auto) > AUTO_KEPT else []:
            del self.points[old], self.kept[old]
            self.dropped += 1
