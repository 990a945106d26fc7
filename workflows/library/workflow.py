"""SkillLibraryWorkflow: the long-lived keeper of a skill library.

Runs take their finished tasks' outcomes here by signal (``task_finished``). The workflow
records each batch of arrivals (uses of skills: r/u/s, deviations, trial verdicts), runs batch
extraction every ``EXTRACT_EVERY`` outcomes over that batch, and maintenance at 10, 20, 40,
80… outcomes. Its state is small (a count, the outcomes not yet extracted from, recent keys
so a repeated signal counts once) and it continues as new when its history grows, carrying
that state. A malformed signal is refused and counted, never fatal.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import ValidationError
from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from workflows.catalogue import (
        EXTRACT_SKILLS,
        MAINTAIN_SKILLS,
        RECORD_OUTCOMES,
        ActivityDecl,
    )
    from workflows.common.failures import root_message
    from workflows.library.contracts import (
        TASK_FINISHED,
        ExtractInput,
        LibraryState,
        MaintainInput,
        TaskOutcome,
    )
    from workflows.library.formulas import EXTRACT_EVERY, maintenance_due

InT = TypeVar("InT")
OutT = TypeVar("OutT")

SEEN_KEPT = 2000
"""Keys of recent outcomes kept to drop repeated signals."""


@workflow.defn
class SkillLibraryWorkflow:
    """Receives outcomes, extracts patterns every K and maintains at 10, 20, 40, 80 outcomes."""

    @workflow.init
    def __init__(self, state: LibraryState) -> None:
        self._state = state
        self._seen = set(state.seen)
        self._inbox: list[TaskOutcome] = []
        self._handled = 0
        self._refused = 0
        self._last: dict[str, Any] = {}

    @workflow.signal(name=TASK_FINISHED)
    def task_finished(self, payload: Any) -> None:
        """One finished task; a malformed payload or a repeat is dropped."""
        try:
            outcome = TaskOutcome.model_validate(payload)
        except ValidationError as err:
            self._refused += 1
            workflow.logger.warning("refused a malformed outcome: %s", err.errors()[:3])
            return
        if outcome.key in self._seen:
            return
        self._seen.add(outcome.key)
        self._state.seen.append(outcome.key)
        self._inbox.append(outcome)

    @workflow.query
    def state(self) -> dict[str, Any]:
        """Outcomes seen, waiting for extraction, refused; what the last passes did."""
        return {"finished": self._state.finished + len(self._inbox),
                "pending": len(self._state.pending) + len(self._inbox),
                "extractions": self._state.extractions,
                "maintenances": self._state.maintenances,
                "last_maintenance": self._state.last_maintenance,
                "refused": self._refused, "last": self._last}

    @workflow.run
    async def run(self, state: LibraryState) -> None:
        """Handle arrivals until the history is long, then continue as new."""
        while True:
            await workflow.wait_condition(
                lambda: bool(self._inbox) or self._should_continue())
            if self._inbox:
                batch, self._inbox = self._inbox, []
                await self._handle(batch)
                self._handled += len(batch)
            if self._should_continue() and not self._inbox:
                await workflow.wait_condition(workflow.all_handlers_finished)
                self._state.seen = self._state.seen[-SEEN_KEPT:]
                workflow.continue_as_new(self._state)

    def _should_continue(self) -> bool:
        return (self._handled >= self._state.continue_after
                or workflow.info().is_continue_as_new_suggested())

    async def _handle(self, batch: list[TaskOutcome]) -> None:
        state = self._state
        uses = [o.model_copy(update={"job": None}) for o in batch if o.skill is not None]
        if uses:
            recorded = await self._call(RECORD_OUTCOMES, uses)
            if recorded is not None:
                self._last["recorded"] = recorded.model_dump()
        state.finished += len(batch)
        state.pending.extend(o for o in batch if _teaches(o))
        while len(state.pending) >= EXTRACT_EVERY:
            chunk, state.pending = state.pending[:EXTRACT_EVERY], state.pending[EXTRACT_EVERY:]
            extracted = await self._call(
                EXTRACT_SKILLS, ExtractInput(outcomes=chunk, auto_approve=state.auto_approve))
            state.extractions += 1
            if extracted is not None:
                self._last["extracted"] = extracted.model_dump()
        point = maintenance_due(state.finished, state.last_maintenance)
        if point is not None:
            maintained = await self._call(MAINTAIN_SKILLS, MaintainInput(finished=point))
            state.last_maintenance = point
            state.maintenances += 1
            if maintained is not None:
                self._last["maintained"] = maintained.model_dump()
        if len(state.seen) > 2 * SEEN_KEPT:
            state.seen = state.seen[-SEEN_KEPT:]
            self._seen = set(state.seen)

    async def _call(self, decl: ActivityDecl[InT, OutT], arg: InT) -> OutT | None:
        """Run one library activity; a failure is logged and the library goes on."""
        try:
            return await decl.run(arg)
        except ActivityError as err:
            workflow.logger.warning("%s failed: %s", decl.name, root_message(err))
            self._last[f"{decl.name}_error"] = root_message(err)
            return None


def _teaches(outcome: TaskOutcome) -> bool:
    """Whether an outcome is new experience for extraction.

    A task that ran a skill's job unchanged only adds to that skill's statistics (recorded);
    one whose job was patched or rewritten on the way may teach an improved version.
    """
    if outcome.skill is None:
        return True
    return bool(outcome.fixes) or outcome.job_author.startswith("debugger:")
