"""Fake activities for workflow tests: registered under the real activity's name.

Workflow tests exercise the real workflows against the time-skipping server; the activities
they call are replaced by small functions with the same names and contracts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, get_type_hints

from temporalio import activity

from workflows.contracts.execution import EventRecord, RecordEventsInput
from workflows.contracts.results import (
    ReportPaths,
    RunReport,
    TaskResult,
    WriteReportInput,
    WriteTaskReportInput,
)
from workflows.contracts.skills import HandOffAnswer, HandOffInput, TaskOutcome, library_id

In = TypeVar("In")
Out = TypeVar("Out")


def fake_activity(name: str, fn: Callable[[In], Awaitable[Out]]) -> Callable[[In], Awaitable[Out]]:
    """Register ``fn`` (a function or bound method) as the activity called ``name``."""

    async def call(arg: In) -> Out:
        return await fn(arg)

    call.__annotations__ = {"arg": _param_type(fn), "return": _return_type(fn)}
    return activity.defn(name=name)(call)


def _param_type(fn: Callable[..., Any]) -> Any:
    hints = get_type_hints(fn)
    return next(v for k, v in hints.items() if k != "return")


def _return_type(fn: Callable[..., Any]) -> Any:
    return get_type_hints(fn)["return"]


class EventSink:
    """Collects recorded events in memory, deduplicating by id like the real store.

    ``keep=False`` keeps their ids only: a run of thousands of tasks records hundreds of
    thousands of events, which the real store holds in its database, not in the worker's
    process (whose garbage collector would walk them all).
    """

    def __init__(self, *, keep: bool = True) -> None:
        self.events: dict[str, EventRecord] = {}
        self.seen: set[str] = set()
        self.keep = keep
        self.batches = 0

    async def record(self, req: RecordEventsInput) -> int:
        self.batches += 1
        new = [e for e in req.events if e.id not in self.seen]
        self.seen.update(e.id for e in new)
        if self.keep:
            self.events.update({e.id: e for e in new})
        return len(new)

    def activity(self) -> Callable[[RecordEventsInput], Awaitable[int]]:
        return fake_activity("record_events", self.record)


class ReportSink:
    """Keeps the last report request, and each task's whole result, instead of writing files."""

    def __init__(self) -> None:
        self.last: WriteReportInput | None = None
        self.tasks: dict[str, TaskResult] = {}

    async def write(self, req: WriteReportInput) -> ReportPaths:
        self.last = req
        return ReportPaths(results_json="results.json", summary_md="summary.md")

    async def write_task(self, req: WriteTaskReportInput) -> str:
        self.tasks[req.result.task_id] = req.result
        return f"tasks/{req.result.task_id}.json"

    def activity(self) -> Callable[[WriteReportInput], Awaitable[ReportPaths]]:
        return fake_activity("write_report", self.write)

    def task_activity(self) -> Callable[[WriteTaskReportInput], Awaitable[str]]:
        return fake_activity("write_task_report", self.write_task)

    def report(self) -> RunReport:
        """The last report the run asked to write."""
        assert self.last is not None, "the run wrote no report"
        return self.last.report


class LearnerSink:
    """Keeps the outcomes tasks hand to the learner, once per key like the library
    (``keep=False``: their keys only, as :class:`EventSink`)."""

    def __init__(self, *, keep: bool = True) -> None:
        self.outcomes: dict[str, TaskOutcome] = {}
        self.keys: set[str] = set()
        self.keep = keep

    async def hand_off(self, req: HandOffInput) -> HandOffAnswer:
        self.keys.add(req.outcome.key)
        if self.keep:
            self.outcomes.setdefault(req.outcome.key, req.outcome)
        return HandOffAnswer(library=library_id(req.skills_queue))

    def activity(self) -> Callable[[HandOffInput], Awaitable[HandOffAnswer]]:
        return fake_activity("hand_off_outcome", self.hand_off)


def any_dict(value: Any) -> dict[str, Any]:
    """Narrow a JSON value to a dict for typed assertions."""
    assert isinstance(value, dict)
    return value  # pyright: ignore[reportUnknownVariableType]
