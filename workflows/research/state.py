"""What a ResearchWorkflow knows about its run, in one object its steps are given.

The plan, the tasks' order, statuses and results, what memory and the skill library said,
and the run's phase and status (mirrored in search attributes). The workflow builds it; its
planning, task running, skills and report steps read and change the run through it.
Deterministic workflow code only.
"""

from __future__ import annotations

from collections import Counter

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.common.events import EventLog, upsert_keywords
    from workflows.constants import PHASE_KEY, STATUS_KEY
    from workflows.contracts.branches import SteerAction, TaskStart
    from workflows.contracts.execution import EventScope, TaskStatus
    from workflows.contracts.plan import Plan
    from workflows.contracts.results import PlanSource, ResearchInput, RunStatus, TaskResult
    from workflows.contracts.roles import RunAnswer
    from workflows.contracts.skills import SkillSummary, SkillUse
    from workflows.research.memory import MemoryAdvice


class RunState:
    """Everything a run knows about itself.

    Args:
        req: the run's input (plan or goal, data, queues, policy).
        branch: the branch this state's tasks run in (none: the run's main line).
        parent_event: a branch's: the run's event that handed it over.
    """

    def __init__(self, req: ResearchInput, *, branch: str | None = None,
                 parent_event: EventScope | None = None) -> None:
        self.req = req
        self.branch = branch
        """The branch this state's tasks run in (none: the run's main line)."""
        self.log = EventLog(req.run_id, f"branch-{branch}" if branch else "run",
                            parent=parent_event)
        self.phase = "intake"
        self.status: RunStatus = "running"
        self.plan: Plan | None = req.plan
        self.reason = ""
        """Why the run has no plan (empty while it has one)."""
        self.order: list[str] = []
        self.states: dict[str, TaskStatus] = {}
        self.results: dict[str, TaskResult] = {}
        self.running: set[str] = set()
        self.answer: RunAnswer | None = None
        self.memory = MemoryAdvice()
        self.skills = SkillSummary()
        self.skill_uses: dict[str, SkillUse] = {}
        self.skills_on = False
        self.from_skill = False
        """Whether the plan is the one a matched skill supplied for the goal."""
        self.supplied_plan: PlanSource | None = None
        """The plan a person supplied, its digest and author (the report's provenance)."""
        self.starts: dict[str, TaskStart] = {}
        """Where a branch's branch-point task starts (its checkpoint), by task id."""
        self.reused: set[str] = set()
        """Tasks whose results came from another line and are never run here."""
        self.paused = False
        """No new task starts while set (running ones finish; gates keep waiting)."""
        self.cancelling = False
        """The run is being cancelled: nothing new starts and running tasks are cancelled."""
        self.broken = ""
        """What raised inside the run's own code (empty: nothing): it ends ``failed``."""
        self.slim: dict[str, tuple[TaskResult, TaskResult]] = {}
        """A large run's results and what its report is given of each, made as each batch
        ends (``workflows.research.report``), so the report is not made all at once."""

    def steer(self, action: SteerAction) -> None:
        """Pause, resume or cancel this line's tasks (``close`` is the run's, not a line's)."""
        if action == "pause":
            self.paused = True
        elif action == "resume":
            self.paused = False
        elif action == "cancel":
            self.cancelling = True

    def set_phase(self, phase: str) -> None:
        """Enter ``phase``, mirrored in the run's search attributes."""
        self.phase = phase
        upsert_keywords(**{PHASE_KEY.name: phase})
        self.log.details.set("phase", f"Run {self.req.run_id}: phase **{phase}**")

    def show_tasks(self) -> None:
        """Put how the tasks stand in the run's details (a task's page says what it waits for)."""
        counts = Counter(self.states.values())
        running = sorted(t for t, s in self.states.items() if s == "running")
        head = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        self.log.details.set("tasks", f"Tasks: {head}" + (
            f"; running: {', '.join(running[:20])} (a task that waits for a person says so on "
            "its own page, `RUN.task-ID`, and in `assay gates`)" if running else ""))

    def set_status(self, status: RunStatus) -> None:
        """Set the run's status, mirrored in its search attributes."""
        self.status = status
        upsert_keywords(**{STATUS_KEY.name: status})

    def tasks(self) -> list[TaskResult]:
        """The tasks' results, in the order they were planned."""
        return [self.results[tid] for tid in self.order]
