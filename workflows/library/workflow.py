"""SkillLibraryWorkflow: the long-lived keeper of a skill library.

Runs take their finished tasks' outcomes here by signal (``task_finished``). The workflow
records each batch of arrivals (uses of skills: r/u/s, deviations, trial verdicts), runs batch
extraction every ``EXTRACT_EVERY`` outcomes over that batch, and maintenance at 10, 20, 40,
80… outcomes. Its state is small (a count, the outcomes not yet extracted from, recent keys
so a repeated signal counts once) and it continues as new when its history grows, carrying
that state. A malformed or oversize signal is refused and counted, never fatal: an outcome's
size is checked before it is parsed (:data:`OUTCOME_MAX_BYTES`), so what the library keeps,
carries across continue-as-new and hands its activities stays under Temporal's payload limit.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from pydantic import ValidationError
from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from workflows.catalogue import (
        EXTRACT_SKILLS,
        MAINTAIN_SKILLS,
        RECORD_OUTCOMES,
        REMEMBER_TASK,
        REMEMBER_TASKS,
        ActivityDecl,
    )
    from workflows.common.bounds import PayloadRefused, read_json
    from workflows.common.failures import root_message
    from workflows.common.validation import field_errors
    from workflows.contracts.memory import RememberAnswer, RememberInput, RememberTasksInput
    from workflows.contracts.plaintext import clip
    from workflows.contracts.policy import Queues
    from workflows.contracts.skills import (
        TASK_FINISHED,
        ExtractInput,
        LibraryState,
        MaintainInput,
        TaskOutcome,
    )
    from workflows.library.formulas import EXTRACT_EVERY, maintenance_due
    from workflows.library.writer import Writer, writer_queue
    from workflows.patches import BATCHED_MEMORY_PATCH

InT = TypeVar("InT")
OutT = TypeVar("OutT")

SEEN_KEPT = 2000
"""Keys of recent outcomes kept to drop repeated signals."""
OUTCOME_MAX_BYTES = 64_000
"""The largest outcome the library reads (UTF-8 JSON); a larger one is refused unread.

An extraction batch holds ``EXTRACT_EVERY`` outcomes and the state carries as many, so ten of
these stay well under Temporal's 2 MB payload limit; an outcome's size is mostly its job's
code."""
REMEMBER_AT_ONCE = 10
"""Outcomes handed to memory at once."""
USES_AT_ONCE = 10
"""Outcomes whose uses are recorded at once, with their jobs (ten stay under 2 MB)."""
RUN_ID_CHARS = 256
"""The longest run id an outcome may have (its key is kept to drop repeats)."""
TASK_ID_CHARS = 64
"""The longest task id an outcome may have (as in a plan)."""
REFUSAL_CHARS = 400
"""How much of the last refusal the ``state`` query shows."""


@workflow.defn
class SkillLibraryWorkflow:
    """Receives outcomes, extracts patterns every K and maintains at 10, 20, 40, 80 outcomes."""

    @workflow.init
    def __init__(self, state: LibraryState) -> None:
        self._state = state
        self._seen = set(state.seen)
        self._inbox: list[TaskOutcome] = []
        self._busy: set[str] = set()
        """Keys of the outcomes taken in but not yet learned from."""
        self._handled = 0
        self._refused = 0
        self._last_refused = ""
        self._last: dict[str, Any] = {}
        self._writer = Writer(self._call, workflow.info().workflow_id)

    @workflow.signal(name=TASK_FINISHED)
    def task_finished(self, raw: RawValue) -> None:
        """One finished task's ``TaskOutcome``; a malformed or oversize one, or a repeat, is lost.

        The argument is taken raw, so its size is checked before it is decoded.
        """
        outcome = self._read(raw)
        if outcome is None or outcome.key in self._seen:
            return
        self._seen.add(outcome.key)
        self._state.seen.append(outcome.key)
        self._busy.add(outcome.key)
        self._inbox.append(outcome)

    def _read(self, raw: RawValue) -> TaskOutcome | None:
        """A signal's raw argument as an outcome, or None once the refusal is counted."""
        try:
            payload = read_json(raw, limit=OUTCOME_MAX_BYTES, what="outcome")
        except PayloadRefused as err:
            return self._refuse(str(err))
        try:
            outcome = TaskOutcome.model_validate(payload)
        except ValidationError as err:
            problems = "; ".join(clip(str(e), 120) for e in field_errors(err, whole="payload",
                                                                         most=3))
            return self._refuse(f"malformed outcome: {problems}")
        if len(outcome.run_id) > RUN_ID_CHARS or len(outcome.task_id) > TASK_ID_CHARS:
            return self._refuse(f"an outcome's run_id has at most {RUN_ID_CHARS} characters "
                                f"and its task_id at most {TASK_ID_CHARS}")
        return outcome

    def _refuse(self, reason: str) -> None:
        self._refused += 1
        self._last_refused = clip(reason, REFUSAL_CHARS)
        workflow.logger.warning("refused an outcome: %s", self._last_refused)

    @workflow.query
    def state(self) -> dict[str, Any]:
        """Outcomes seen, waiting for extraction, refused; what the last passes did."""
        return {"finished": self._state.finished + len(self._inbox),
                "pending": len(self._state.pending) + len(self._inbox),
                "extractions": self._state.extractions,
                "maintenances": self._state.maintenances,
                "last_maintenance": self._state.last_maintenance,
                "refused": self._refused, "last_refused": self._last_refused,
                "last": self._last, "writer": self._writer.stats}

    @workflow.query
    def unlearned(self, keys: list[str]) -> list[str]:
        """Those of ``keys`` (``run_id/task_id``) that arrived and are not yet learned from."""
        return [k for k in keys[:10_000] if k in self._busy]

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
                self._busy.difference_update(o.key for o in batch)
            if self._should_continue() and not self._inbox:
                await workflow.wait_condition(workflow.all_handlers_finished)
                self._state.seen = self._state.seen[-SEEN_KEPT:]
                workflow.continue_as_new(self._state)

    def _should_continue(self) -> bool:
        return (self._handled >= self._state.continue_after
                or workflow.info().is_continue_as_new_suggested())

    async def _handle(self, batch: list[TaskOutcome]) -> None:
        state = self._state
        await self._remember([o for o in batch if o.memory is not None])
        batch = [o.model_copy(update={"memory": None}) for o in batch if o.skills]
        if not batch:
            return
        offered = [o for o in batch if o.skill is not None or o.guidelines]
        for uses in (offered[i:i + USES_AT_ONCE] for i in range(0, len(offered), USES_AT_ONCE)):
            recorded = await self._call(RECORD_OUTCOMES, uses)
            if recorded is not None:
                self._last["recorded"] = recorded.model_dump()
        state.finished += len(batch)
        state.pending.extend(o for o in batch if _teaches(o))
        while len(state.pending) >= EXTRACT_EVERY:
            chunk, state.pending = state.pending[:EXTRACT_EVERY], state.pending[EXTRACT_EVERY:]
            queue = writer_queue(chunk)
            extracted = await self._call(
                EXTRACT_SKILLS, ExtractInput(outcomes=chunk, auto_approve=state.auto_approve,
                                             briefs=queue is not None))
            state.extractions += 1
            if extracted is not None:
                self._last["extracted"] = extracted.model_dump(exclude={"briefs"})
                if queue is not None and extracted.briefs:
                    await self._writer.write(extracted.briefs, queue)
        point = maintenance_due(state.finished, state.last_maintenance)
        if point is not None:
            maintained = await self._call(MAINTAIN_SKILLS, MaintainInput(finished=point))
            state.last_maintenance = point
            state.maintenances += 1
            if maintained is not None:
                self._last["maintained"] = maintained.model_dump(exclude={"undecided"})
                queue = writer_queue(batch) if maintained.undecided else None
                if queue is not None:
                    await self._writer.judge(maintained.undecided, queue)
        if len(state.seen) > 2 * SEEN_KEPT:
            state.seen = state.seen[-SEEN_KEPT:]
            self._seen = set(state.seen)

    async def _remember(self, outcomes: list[TaskOutcome]) -> None:
        """Hand each outcome's memory part to memory, ten at a time, in arrival order.

        Ten go in one ``remember_tasks`` call per memory queue (most runs share one); the
        memory learns from them in turn, as it would one by one, for one dispatch.
        """
        learned: list[RememberAnswer] = []
        batched = workflow.patched(BATCHED_MEMORY_PATCH)
        for start in range(0, len(outcomes), REMEMBER_AT_ONCE):
            chunk = outcomes[start:start + REMEMBER_AT_ONCE]
            if batched:
                learned.extend(await self._remember_at_once(chunk))
                continue
            answers = await asyncio.gather(*(
                self._call(REMEMBER_TASK, o.memory, queues=Queues(reflection=o.memory_queue))
                for o in chunk if o.memory is not None))
            learned.extend(a for a in answers if a is not None)
        if learned:
            self._last["remembered"] = {
                "tasks": len(learned),
                "rules_promoted": [r for a in learned for r in a.rules_promoted],
                "templates_cached": [t for a in learned for t in a.templates_cached]}

    async def _remember_at_once(self, chunk: list[TaskOutcome]) -> list[RememberAnswer]:
        """One ``remember_tasks`` call for each memory queue the chunk's outcomes name."""
        by_queue: dict[str, list[RememberInput]] = {}
        for outcome in chunk:
            if outcome.memory is not None:
                by_queue.setdefault(outcome.memory_queue, []).append(outcome.memory)
        answers = await asyncio.gather(*(
            self._call(REMEMBER_TASKS, RememberTasksInput(tasks=tasks),
                       queues=Queues(reflection=queue))
            for queue, tasks in by_queue.items()))
        return [a for answer in answers if answer is not None for a in answer.answers]

    async def _call(self, decl: ActivityDecl[InT, OutT], arg: InT, *,
                    queues: Queues | None = None) -> OutT | None:
        """Run one library activity; a failure is logged and the library goes on."""
        try:
            return await decl.run(arg, queues=queues)
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
