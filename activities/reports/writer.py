"""Report files: the results JSON and Markdown of a run, and each task's whole result.

A task writes its whole, uncut result to ``<run>/tasks/<task_id>.json`` as it ends; the
run's report reads those back (a reset execution of the run writes its report in a folder of
its own, ``<run>/reset-<execution>/``, and its tasks' files replace those of the tasks it ran
again), so the results JSON and Markdown list every artifact even
though the results the workflows exchange are capped. Every file is written to a temporary
name and renamed: a retried write replaces the file (the report's timestamp is the run's
start, so its names do not change either) and a reader never sees half of one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from temporalio.exceptions import ApplicationError

from activities.artifacts.store import ArtifactStore, StoreError, StoreUnavailableError
from activities.metrics import record
from activities.reports.claims import answer_unheld
from activities.reports.events import EVENTS_FILE, events_markdown, read_events
from activities.reports.keep import ARTIFACT_BUDGET, ArtifactKeeper
from activities.reports.kpis import run_kpis
from activities.reports.large import is_large
from activities.reports.ledger import LedgerError, append_ledger, ledger_entries
from activities.reports.markdown import render_markdown
from activities.reports.sweeps import sweep_tables
from activities.reports.timeline import draw_timeline
from activities.reports.verified import ANSWERED_BY, verified_answer
from client.runs import short_execution
from workflows.catalogue import WRITE_REPORT, WRITE_TASK_REPORT
from workflows.common.validation import path_component
from workflows.contracts.branches import MAIN_LINE
from workflows.contracts.errors import ErrorType
from workflows.contracts.results import (
    ReportPaths,
    RunReport,
    TaskResult,
    WriteReportInput,
    WriteTaskReportInput,
    scoped,
)

if TYPE_CHECKING:
    from activities.events.schema import StoredEvent
    from activities.events.store import EventStore

TASKS_FOLDER = "tasks"
RESET_PREFIX = "reset-"


class ReportWriter:
    """Writes report files under the runs directory of the data dir.

    Args:
        runs_dir: where each run gets its folder.
        store: the artifact store the sandbox puts the jobs' artifacts in; they are copied
            from it into the run's folder (None: none is copied; the report lists them).
        artifact_budget: bytes of artifacts copied per run at most.
        events: the event store the run's events are read from for ``timeline.md``.
    """

    def __init__(self, runs_dir: Path, store: ArtifactStore | None = None, *,
                 artifact_budget: int = ARTIFACT_BUDGET, events: EventStore | None = None,
                 ) -> None:
        self.runs_dir = runs_dir
        self.store = store
        self.events = events
        self.keeper = ArtifactKeeper(store, budget=artifact_budget)

    @WRITE_REPORT.defn
    async def write_report(self, req: WriteReportInput) -> ReportPaths:
        """Write ``execution_results_<ts>.json`` and ``execution_summary_<ts>.md``.

        With them, the run's folder gets a copy of each verified artifact and the tasks'
        timeline figure, and ``timeline.md`` its events as a tree; that work runs in a
        thread, off the worker's event loop. The run is counted in Assay's metrics (its
        status and its gates' waits).
        """
        events = await read_events(self.events, req.report)
        try:
            paths = await asyncio.to_thread(self._write, req.report, events)
        except StoreUnavailableError as err:  # retried: writing the report again is idempotent
            raise ApplicationError(f"the report of {req.report.run_id} is written but could "
                                   f"not be put in the artifact store: {err}",
                                   type=ErrorType.STORE_UNAVAILABLE) from err
        except ValueError as err:
            raise _refused("the report of a run", err) from None
        except (OSError, LedgerError, StoreError) as err:
            raise _unwritable(f"the report of {req.report.run_id}", self.runs_dir,
                              err) from err
        record.run_finished(req.report)
        return paths

    @WRITE_TASK_REPORT.defn
    async def write_task_report(self, req: WriteTaskReportInput) -> str:
        """Write a task's whole result to ``<run>/tasks/<task_id>.json``; return its path.

        The task is counted in Assay's metrics (status, phase durations, retries, gates).
        """
        try:
            path = self.task_path(req.run_id, scoped(req.result.task_id, req.result.branch))
            private_dirs(self.runs_dir, path.parent)
            write_atomic(path, req.result.model_dump_json(indent=2))
        except ValueError as err:
            raise _refused(f"the result of task {req.result.task_id[:80]}", err) from None
        except OSError as err:
            raise _unwritable(f"the result of task {req.result.task_id} of {req.run_id}",
                              self.runs_dir, err) from err
        record.task_finished(req.run_id, req.result)
        return str(path)

    def task_path(self, run_id: str, task_id: str) -> Path:
        """Where a task of a run keeps its whole result.

        Raises:
            ValueError: an id that would leave the runs folder (any client can start a run).
        """
        return (self.run_folder(run_id) / TASKS_FOLDER
                / f"{path_component(task_id, 'task id')}.json")

    def run_folder(self, run_id: str) -> Path:
        """The run's report folder, ``<runs dir>/<run id>``.

        Raises:
            ValueError: a run id that would leave the runs folder.
        """
        return self.runs_dir / path_component(run_id, "run id")

    def folder(self, report: RunReport) -> Path:
        """Where a run's report goes: the run's folder, or ``reset-<execution>`` inside it.

        The latter for an execution that ``temporal workflow reset`` started.

        Raises:
            ValueError: a run id that would leave the runs folder (any client can start a run).
        """
        folder = self.run_folder(report.run_id)
        if report.reset():
            folder = folder / path_component(
                f"{RESET_PREFIX}{short_execution(report.execution)}", "execution")
        return folder

    def _write(self, report: RunReport,
               events: list[StoredEvent] | str | None = None) -> ReportPaths:
        folder = self.folder(report)
        private_dirs(self.runs_dir, folder)
        json_path = folder / f"execution_results_{report.timestamp}.json"
        md_path = folder / f"execution_summary_{report.timestamp}.md"
        ledger = folder / "ledger.jsonl"
        paths = ReportPaths(results_json=str(json_path), summary_md=str(md_path),
                            ledger=str(ledger))
        tasks = [self._whole(report.run_id, task) for task in report.tasks]
        sweeps = (sweep_tables(report.branches, lambda line, tid: self._point(
            report.run_id, tid, None if line == MAIN_LINE else line))
            if report.branches is not None else [])
        final = report.model_copy(update={"report": paths, "tasks": tasks, "sweeps": sweeps})
        if final.answer is not None:
            final.answer_by = "output processor"
            final.answer_unheld = answer_unheld(final.answer, tasks)
        elif any(t.status == "completed" for t in tasks):
            final.answer, final.answer_by = verified_answer(tasks), ANSWERED_BY
        files = self.keeper.keep(folder, tasks)
        figure = None if is_large(final) else draw_timeline(final, folder)
        files.figures = [figure] if figure else []
        if events is not None:
            write_atomic(folder / EVENTS_FILE, events_markdown(report, events))
            files.events = EVENTS_FILE
        final.files = files
        final.kpis = run_kpis(final)
        append_ledger(ledger, ledger_entries(final))
        write_atomic(json_path, final.model_dump_json(indent=2))
        write_atomic(md_path, render_markdown(final))
        return self._stored(paths)

    def _stored(self, paths: ReportPaths) -> ReportPaths:
        """The paths with the digests of the results JSON and summary put in the store.

        Raises:
            StoreUnavailableError: the store cannot be reached; the activity is retried (the
                files and the ledger are written again to the same content).
        """
        if self.store is None:
            return paths
        results = self.store.put(Path(paths.results_json)).sha256
        summary = self.store.put(Path(paths.summary_md)).sha256
        return paths.model_copy(update={"results_sha256": results, "summary_sha256": summary})

    def _point(self, run_id: str, task_id: str, branch: str | None) -> TaskResult | None:
        """A line's branch-point task as it wrote itself (None: no file, or unreadable)."""
        try:
            path = self.task_path(run_id, scoped(task_id, branch))
            return TaskResult.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def _whole(self, run_id: str, task: TaskResult) -> TaskResult:
        """The task's whole result from the file it wrote, with the status it ended with.

        A task that wrote none (blocked, cancelled, or older than the file) or whose file
        cannot be read stays as its run received it; its ``omitted`` says what that lacks.
        """
        if not task.detail:
            return task
        try:
            path = self.task_path(run_id, scoped(task.task_id, task.branch))
            text = path.read_text(encoding="utf-8")
            whole = TaskResult.model_validate_json(text)
        except (OSError, ValueError):
            return task
        return whole.model_copy(update={"status": task.status,
                                        "status_reason": task.status_reason,
                                        "detail": task.detail})


def private_dirs(top: Path, path: Path) -> None:
    """Create ``top`` and each folder from it down to ``path`` as 0700: they hold run data."""
    top.mkdir(mode=0o700, parents=True, exist_ok=True)
    for part in path.relative_to(top).parts:
        top = top / part
        top.mkdir(mode=0o700, exist_ok=True)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a fresh temporary file beside ``path``, then rename it over ``path``.

    The temporary name is unique, so two attempts of one write never share a half-written
    file, and the rename replaces the file whole.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _refused(what: str, err: ValueError) -> ApplicationError:
    """An id that would put a report outside the runs folder (any client can start a run)."""
    return ApplicationError(f"will not write {what}: {err}", type=ErrorType.REPORT_UNWRITABLE,
                            non_retryable=True)


def _unwritable(what: str, runs_dir: Path, err: Exception) -> ApplicationError:
    return ApplicationError(f"cannot write {what} under {runs_dir}: {err}; check that the "
                            "data dir's runs folder is writable and has space",
                            type=ErrorType.REPORT_UNWRITABLE, non_retryable=True)
