"""The study's report across its cycles: ``study.json``, ``study.md`` and its chart.

The study workflow calls ``write_study_report`` after each cycle and at its end, so the
folder always says where the study stands. ``study.json`` is a :class:`StudyReport`: the
study's :class:`StudyState` (it reads back as one) with its status, times, each cycle's
report files and the chart's metric. Each cycle's own report (a run's results JSON, named in
its summary) is read for its branches and, for the latest cycle, its plan's DAG; a cycle
report that is missing or unreadable leaves its points out of the chart and is named in the
Markdown, never failing the study's report. Each cycle's sweep tables (every line of a group of
branches: ``activities.reports.sweeps``) are copied into ``study.json`` and shown in the
Markdown. Files are written like a run's report: to a
temporary name, then renamed.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from pydantic import Field, ValidationError
from temporalio.exceptions import ApplicationError

from activities.reports.claims import unheld, verified_numbers
from activities.reports.kpis import run_kpis
from activities.reports.study_axis import caption
from activities.reports.study_figures import Chart, CycleFacts, chart_of, draw_metrics, facts_of
from activities.reports.study_markdown import render_study
from activities.reports.sweeps import sweep_markdown
from activities.reports.writer import private_dirs, write_atomic
from workflows.catalogue import WRITE_STUDY_REPORT
from workflows.common.validation import path_component
from workflows.contracts.alternatives import Metric
from workflows.contracts.base import Model
from workflows.contracts.branches import SweepTable
from workflows.contracts.cycles import StudyReportInput, StudyStatus
from workflows.contracts.errors import ErrorType
from workflows.contracts.kpis import Kpis
from workflows.contracts.results import ReportPaths, RunReport
from workflows.contracts.study import CycleSummary, StudyState
from workflows.contracts.synthesis import StudySynthesis

STUDY_JSON = "study.json"
STUDY_MD = "study.md"
CYCLE_REPORT_BYTES = 256 * 1024 * 1024
"""A cycle's results JSON larger than this is not read (its points are left out)."""
_RESULTS, _SUMMARY = "execution_results_", "execution_summary_"


class CycleReport(Model):
    """One cycle's report files as the study's report found them."""

    cycle: int
    run_id: str
    results_json: str = ""
    """Where its results JSON is (resolved), or empty when the cycle recorded none."""
    summary_md: str = ""
    """Its Markdown summary beside the results JSON (empty: not there)."""
    problem: str = ""
    """Why its results JSON could not be used (empty: it was read)."""


class StudyReport(StudyState):
    """``study.json``: the study's state with its status, times, cycle reports and chart."""

    status: StudyStatus = "running"
    reason: str = ""
    """How the study ended (empty while it runs)."""
    started_at: datetime | None = None
    finished_at: datetime | None = None
    reports: list[CycleReport] = Field(default_factory=list[CycleReport])
    figures: list[str] = Field(default_factory=list[str])
    """Figures drawn for the report, relative to its folder."""
    chart_metric: Metric | None = None
    """The metric the chart follows (the policy's key metric, or the one most reported)."""
    sweeps: dict[int, list[SweepTable]] = Field(default_factory=dict[int, list[SweepTable]])
    """Each cycle's groups of branches, every line in one table (cycles without: absent)."""
    cycle_kpis: dict[int, Kpis] = Field(default_factory=dict[int, Kpis])
    """Each cycle's planning KPIs, from its report (a cycle whose report was not read has
    none)."""
    synthesis: StudySynthesis | None = None
    """The study synthesizer's answer, with the numbers no verified metric holds (None: the
    deterministic synthesis stands)."""
    synthesis_note: str = ""
    """Why the deterministic synthesis stands (empty while the study runs)."""


STUDIES = "studies"
"""The data dir's folder of study reports, one folder per study."""


class StudyReportWriter:
    """Writes a study's report into its folder.

    Args:
        root: the data dir; a relative ``folder`` (none given: ``studies/<study>``) and
            relative cycle report paths are taken below it.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def folder(self, req: StudyReportInput) -> Path:
        """The study's report folder: ``req.folder`` inside the root, or the study's own.

        Raises:
            ValueError: a folder or study id that would leave the root.
        """
        given = req.folder.strip()
        if not given:
            return self.root / STUDIES / path_component(req.state.study_id, "study id")
        parts = given.split("/")
        for part in parts:
            path_component(part, "report folder part")
        return self.root.joinpath(*parts)

    @WRITE_STUDY_REPORT.defn
    async def write_study_report(self, req: StudyReportInput) -> ReportPaths:
        """Write ``study.json``, ``study.md`` and ``figures/metrics.png`` into the folder.

        Reading the cycles' reports and drawing run in a thread, off the worker's loop.
        """
        try:
            folder = self.folder(req)
        except ValueError as err:  # any client can start a study: its id is not trusted
            raise ApplicationError(
                f"will not write the report of a study: {err}",
                type=ErrorType.REPORT_UNWRITABLE, non_retryable=True) from None
        try:
            return await asyncio.to_thread(write_study, req, folder, self.root)
        except OSError as err:
            raise ApplicationError(
                f"cannot write the report of study {req.state.study_id} in {folder}: {err}; "
                "check that the folder is writable and has space",
                type=ErrorType.REPORT_UNWRITABLE, non_retryable=True) from err


def write_study(req: StudyReportInput, folder: Path, root: Path) -> ReportPaths:
    """Write the study's report files into ``folder``; return their paths."""
    if folder.is_relative_to(root):
        private_dirs(root, folder)  # run data: its user's only
    else:
        folder.mkdir(parents=True, exist_ok=True)
    reports: list[CycleReport] = []
    facts: list[CycleFacts] = []
    latest: RunReport | None = None
    sweeps: dict[int, list[SweepTable]] = {}
    kpis: dict[int, Kpis] = {}
    runs: list[RunReport] = []
    for summary in req.state.summaries:
        found, run = read_cycle(summary, root)
        reports.append(found)
        runs += [run] if run is not None else []
        facts.append(facts_of(summary, run))
        if run is not None:
            kpis[summary.cycle] = run.kpis or run_kpis(run)
        latest = run
        if run is not None and run.sweeps:
            sweeps[summary.cycle] = run.sweeps
    chart = chart_of(req.state, facts)
    criteria = _criteria(req.state, chart)
    chart = replace(chart, caption=caption(chart, criteria))
    figure = draw_metrics(chart, folder, criteria=criteria)
    report = StudyReport.model_validate({
        **req.state.model_dump(), "status": req.status, "reason": req.reason,
        "started_at": req.started_at,
        "finished_at": req.finished_at, "reports": reports,
        "figures": [figure] if figure else [], "chart_metric": chart.metric,
        "sweeps": sweeps,
        "cycle_kpis": kpis, "synthesis": _checked(req, runs),
        "synthesis_note": req.synthesis_note})
    paths = ReportPaths(results_json=str(folder / STUDY_JSON),
                        summary_md=str(folder / STUDY_MD))
    write_atomic(folder / STUDY_JSON, report.model_dump_json(indent=2))
    write_atomic(folder / STUDY_MD, render_study(report, chart, latest, folder)
                 + _sweeps_markdown(sweeps))
    return paths


def read_cycle(summary: CycleSummary, root: Path) -> tuple[CycleReport, RunReport | None]:
    """A cycle's report files, and its results JSON read (None, with the problem, if not)."""
    found = CycleReport(cycle=summary.cycle, run_id=summary.run_id)
    if not summary.results_json:
        found.problem = "the cycle recorded no report"
        return found, None
    path = root / summary.results_json
    found.results_json = str(path)
    beside = path.with_name(path.name.replace(_RESULTS, _SUMMARY, 1)).with_suffix(".md")
    if beside != path and beside.is_file():
        found.summary_md = str(beside)
    try:
        size = path.stat().st_size
        if size > CYCLE_REPORT_BYTES:
            found.problem = f"{path} is {size:,} bytes, more than the {CYCLE_REPORT_BYTES:,} read"
            return found, None
        run = RunReport.model_validate_json(path.read_bytes())
    except OSError as err:
        found.problem = f"cannot read {path}: {err.strerror or err}"
        return found, None
    except ValidationError as err:
        found.problem = f"{path} is not a run's results JSON ({err.error_count()} errors)"
        return found, None
    if run.run_id != summary.run_id:
        found.problem = f"{path} is the report of run {run.run_id}, not of {summary.run_id}"
        return found, None
    return found, run


def _checked(req: StudyReportInput, runs: list[RunReport]) -> StudySynthesis | None:
    """The synthesizer's answer with its numbers that no verified metric holds flagged.

    Verified: every task metric of the cycles' summaries and reports, the hypotheses'
    evidence, the key values with their intervals, and the criteria's thresholds.
    """
    given = req.synthesis
    if given is None:
        return None
    state = req.state
    pool = verified_numbers([
        *(v for s in state.summaries for t in s.tasks for v in t.metrics.values()),
        *(v for r in runs for t in r.tasks if t.status == "completed"
          for v in t.metrics.values()),
        *(e.model_dump(include={"value", "ci", "level"}) for h in state.tree.hypotheses
          for e in h.evidence),
        *(s.key_value for s in state.summaries), *(s.key_ci for s in state.summaries),
        *(t.threshold for t in state.policy.acceptance)])
    text = "\n".join([given.conclusion, *(s.text for s in given.statements)])
    return given.model_copy(update={"unheld": unheld(text, pool)})


def _criteria(state: StudyState, chart: Chart) -> list[tuple[str, float]]:
    """The acceptance thresholds on the chart's metric, to draw as lines."""
    if chart.metric is None:
        return []
    return [(test.describe(), float(test.threshold)) for test in state.policy.acceptance
            if test.metric == chart.metric.name and isinstance(test.threshold, int | float)
            and not isinstance(test.threshold, bool)]


def _sweeps_markdown(sweeps: dict[int, list[SweepTable]]) -> str:
    """The cycles' sweep tables as a Markdown section (empty: no cycle branched)."""
    if not sweeps:
        return ""
    lines = ["", "## Sweeps", "", "Every line of each cycle's groups of branches: what it "
             "changed, its metrics with their intervals, its status and cost, and which line "
             "was kept and why."]
    for cycle, tables in sorted(sweeps.items()):
        lines += sweep_markdown(tables, heading=f"### Cycle {cycle}:")
    return "\n".join(lines) + "\n"
