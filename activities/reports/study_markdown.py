"""The study's Markdown: its story in a paragraph, then the numbers and diagrams behind it.

Read top to bottom in two minutes: an ended study's synthesis (what was found, how sure,
what is still open: :mod:`activities.reports.study_synthesis`), the story (each cycle's
decision and why, on one line), the cycle table and chart, the hypothesis tree (a Mermaid
flowchart and a table of its evidence), the final answer with the acceptance criteria's
values, the tasks carried forward, links to each cycle's report, and the latest cycle's plan
as a Mermaid DAG.
Everything that comes from people, plans or models (goal, statements, reasons, names) goes
through the run report's escapes: :func:`~activities.reports.branches.md` for Markdown,
:func:`~activities.reports.branches.label` for Mermaid.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from activities.reports.branches import label, md
from activities.reports.figures import mermaid
from activities.reports.kpis import cycles_table
from activities.reports.numbers import duration, number
from activities.reports.study_criteria import criteria, warnings
from activities.reports.study_figures import Chart, LinePoint
from activities.reports.study_synthesis import synthesis
from activities.reports.tasks import link
from workflows.branching.selection import ALLOW_FLAG, held_out
from workflows.contracts.results import RunReport
from workflows.contracts.study import CarriedTask, CycleDecision, CycleSummary
from workflows.contracts.words import plural

if TYPE_CHECKING:
    from activities.reports.study import StudyReport

TITLE_CHARS = 120
REASON_CHARS = 240
STATEMENT_CHARS = 300
STORY_CYCLES = 12
"""Cycles the story tells one by one; a longer study tells its first and latest (the table
has all)."""
HYPOTHESIS_COLOURS = {"open": "#757575", "supported": "#2e7d32", "refuted": "#c62828",
                      "inconclusive": "#f9a825"}
NONE = "—"


def render_study(report: StudyReport, chart: Chart, latest: RunReport | None,
                 folder: Path) -> str:
    """The study's Markdown report.

    Args:
        report: what ``study.json`` holds.
        chart: the chart's data (its metric and values).
        latest: the latest cycle's report (None: none ran, or it could not be read).
        folder: the study's folder, for relative links to the cycles' reports.
    """
    # a first plan is named by its name in the title (its digest is in the header)
    start = report.goal or (report.first_plan or "").partition("@")[0] or report.study_id
    lines = [f"# Study: {md(start, TITLE_CHARS)} — {report.status}", "",
             *_header(report, chart), *synthesis(report), *_goal(report.goal),
             *_story(report, chart), *_cycles(report, chart), *cycles_table(report.cycle_kpis),
             *_hypotheses(report), *_answer(report), *_carried(report), *_links(report, folder),
             *_plan(report, latest)]
    return "\n".join(lines) + "\n"


def _header(report: StudyReport, chart: Chart) -> list[str]:
    took = (f" (took {duration((report.finished_at - report.started_at).total_seconds())})"
            if report.started_at and report.finished_at else "")
    budget = f" of ${report.policy.budget_usd:.2f}" if report.policy.budget_usd else ""
    lines = [f"- Study: {md(report.study_id)}",
             f"- Status: **{report.status}** after {plural(report.cycles, 'cycle')} "
             f"(at most {report.policy.max_cycles})"
             + (f": {md(report.reason)}" if report.reason else ""),
             f"- Spent: ${report.spent_usd:.4f}{budget}; cycles' wall time "
             f"{duration(sum(s.wall_s for s in report.summaries))}"]
    if report.started_at:
        end = f" — finished: {report.finished_at.isoformat()}" if report.finished_at else ""
        lines.append(f"- Started: {report.started_at.isoformat()}{end}{took}")
    if report.first_plan:
        lines.append(f"- First plan: {md(report.first_plan)}")
    if chart.metric:
        lines.append(f"- Key metric: {md(chart.metric.name)} ({chart.metric.direction}; "
                     f"{md(chart.why)})")
    return lines


def _goal(goal: str | None) -> list[str]:
    if not goal or len(goal) <= TITLE_CHARS:
        return []
    return ["", "## Goal", "", f"> {md(goal, len(goal))}"]


def _decision(decision: CycleDecision | None) -> str:
    if decision is None:
        return "no decision yet"
    pursue = f" → {md(decision.pursue)}" if decision.pursue else ""
    by = "" if decision.by == "rules" and decision.person is None else \
        f" ({md(decision.who(), 500)})"  # the rules alone say nothing more
    escalated = (f" (**escalated**: abandons {md(', '.join(decision.abandon) or 'its approach')})"
                 if decision.escalated else "")
    return f"**{decision.action}**{pursue}{escalated}{by}"


def _story(report: StudyReport, chart: Chart) -> list[str]:
    """How many cycles, each decision and why on one line, the last decision and its numbers."""
    summaries = report.summaries
    if not summaries:
        return ["", "## Story", "", "No cycle has run yet."]
    decided = {h: sum(x.status == h for x in report.tree.hypotheses)
               for h in ("supported", "refuted", "open", "inconclusive")}
    lines = ["", "## Story", "",
             f"The study ran {plural(len(summaries), 'cycle')} for ${report.spent_usd:.2f} and "
             f"is **{report.status}**; its hypotheses: {decided['supported']} supported, "
             f"{decided['refuted']} refuted, {decided['open'] + decided['inconclusive']} "
             "still open.", ""]
    told = summaries if len(summaries) <= STORY_CYCLES else \
        [*summaries[:2], *summaries[-(STORY_CYCLES - 2):]]
    for n, s in enumerate(told):
        if n and told[n - 1].cycle + 1 != s.cycle:
            lines.append(f"- … cycles {told[n - 1].cycle + 1} to {s.cycle - 1}: in the table")
        why = f": {md(s.decision.reason, REASON_CHARS)}" if s.decision else ""
        lines.append(f"- Cycle {s.cycle} ({s.tasks_total - s.unfinished}/{s.tasks_total} "
                     f"tasks, {s.status}): {_decision(s.decision)}{why}")
    return [*lines, "", _ending(report, chart)]


def _ending(report: StudyReport, chart: Chart) -> str:
    last = report.summaries[-1]
    trend = [(c, v) for c, v in sorted(chart.values.items()) if v is not None]
    numbers = ""
    if chart.metric and trend:
        best = (min if chart.metric.direction == "minimize" else max)(trend, key=lambda p: p[1])
        tasks = {s.cycle: s.key_task for s in report.summaries if s.key_task}
        source = f", task {md(tasks[best[0]], 60)}" if best[0] in tasks else ""
        numbers = (f" {md(chart.metric.name)}: {number(trend[0][1])} in cycle {trend[0][0]} → "
                   f"{number(trend[-1][1])} in cycle {trend[-1][0]} (best {number(best[1])}, "
                   f"cycle {best[0]}{source}).")
    head = "Final decision" if report.status != "running" else "Latest decision"
    return (f"{head}, after cycle {last.cycle}: {_decision(last.decision)}"
            + (f" — {md(last.decision.reason, REASON_CHARS)}" if last.decision else "")
            + "." + numbers)


def _cycles(report: StudyReport, chart: Chart) -> list[str]:
    name = md(chart.metric.name, 40) if chart.metric else "key metric"
    key = report.policy.key_metric
    allowed = ([f"The key metric {md(key.name, 40)} is held out: selecting on it was allowed by "
                f"{ALLOW_FLAG}, so its best value is optimistic.", ""]
               if key is not None and report.policy.allow_test_selection
               and held_out(key.name) else [])
    lines = ["", "## Cycles", "", *allowed,
             f"| cycle | run | status | tasks completed | {name} | cost (USD) | wall time "
             "| decision | reason |",
             "| ---: | --- | --- | ---: | ---: | ---: | ---: | --- | --- |"]
    for s in report.summaries:
        v = chart.values.get(s.cycle)
        reason = md(s.decision.reason, REASON_CHARS) if s.decision else NONE
        key = NONE if v is None else number(v) + _interval(chart, s.cycle) + _source(s)
        lines.append(f"| {s.cycle} | {md(s.run_id, 80)} | {s.status} "
                     f"| {s.tasks_total - s.unfinished}/{s.tasks_total} | {key} | {s.cost_usd:.4f} "
                     f"| {duration(s.wall_s)} | {_decision(s.decision)} | {reason} |")
    lines += _figure_notes(report, chart)
    return lines


def _interval(chart: Chart, cycle: int) -> str:
    """`` [0.42, 0.55]``: the interval of the cycle's charted value (empty: it has none)."""
    ci = chart.intervals.get(cycle)
    if ci is None:
        return ""
    return " " + md(f"[{number(ci[0])}, {number(ci[1])}]")


def _source(summary: CycleSummary) -> str:
    """`` (task fit)``: the task the cycle's key value came from (empty: not known)."""
    return f" (task {md(summary.key_task, 60)})" if summary.key_task else ""


def _figure_notes(report: StudyReport, chart: Chart) -> list[str]:
    """The chart, each branch comparison drawn in it, and what it leaves out and why."""
    lines = ["", *(f"!{link('Key metric across cycles and branches', f)}"
                   for f in report.figures)]
    notes = [f"Chart: {md(chart.caption, 600)}"] if chart.caption else []
    notes += [_compared(cycle, points, chart) for cycle, points in sorted(chart.lines.items())]
    notes += [f"Chart: cycle {r.cycle}: {md(r.problem, 400)} — its branches are not in the "
              "chart" for r in report.reports if r.problem]
    missing = [c for c, v in sorted(chart.values.items()) if v is None]
    if chart.metric and missing:
        notes.append(f"Chart: no verified {md(chart.metric.name)} in cycle(s) "
                     f"{', '.join(map(str, missing))}: no point drawn")
    if chart.metric is None:
        notes.append(f"Chart: nothing to chart: {md(chart.why)}")
    if chart.other_groups:
        notes.append(f"Chart: {plural(chart.other_groups, 'branch comparison')} on another "
                     "metric not drawn")
    return [*lines, "", *(f"- {n}" for n in notes)] if notes else lines


def _compared(cycle: int, points: list[LinePoint], chart: Chart) -> str:
    """``Cycle 3 compared 3 lines on f1: deep 0.74 (kept), main 0.71, wide 0.66``."""
    sign = 1 if chart.metric and chart.metric.direction == "minimize" else -1
    shown = [f"{md(p.name, 60)} {number(p.value)}" + (" (kept)" if p.kept else "")
             for p in sorted(points, key=lambda p: sign * p.value)]
    name = md(chart.metric.name) if chart.metric else ""
    return f"Cycle {cycle} compared {plural(len(points), 'line')} on {name}: {', '.join(shown)}"


def _hypotheses(report: StudyReport) -> list[str]:
    """The tree as a flowchart (each pivot a dotted edge) and a table of its evidence."""
    tree = report.tree
    if not tree.hypotheses:
        return ["", "## Hypotheses", "", "No hypothesis was proposed."]
    ids = {h.id: f"h{n}" for n, h in enumerate(tree.hypotheses)}
    chart = ["```mermaid", "flowchart TD"]
    chart += [f'  {ids[h.id]}["{label(h.id, h.statement, h.status)}"]:::{h.status}'
              for h in tree.hypotheses]
    chart += [f"  {ids[h.parent]} --> {ids[h.id]}" for h in tree.hypotheses if h.parent]
    chart += _pivots(report.summaries, ids)
    chart += [f"  classDef {status} fill:{colour}22,stroke:{colour},color:#000"
              for status, colour in HYPOTHESIS_COLOURS.items()
              if any(h.status == status for h in tree.hypotheses)]
    rows = ["| hypothesis | parent | statement | test | status | metric | value | cycle | task |",
            "| --- | --- | --- | --- | --- | --- | ---: | ---: | --- |"]
    for h in tree.hypotheses:
        status = h.status + (f" (cycle {h.decided_in}{', concluded' if h.concluded else ''})"
                             if h.decided_in else "") + (
            f", abandoned in cycle {h.abandoned_in}" if h.abandoned_in else "")
        head = (f"| {md(h.id)} | {md(h.parent) if h.parent else NONE} "
                f"| {md(h.statement, STATEMENT_CHARS)} | {md(h.test.describe())} | {status}")
        items = h.evidence or [None]
        for n, e in enumerate(items):
            first = head if n == 0 else "| | | | |"
            rows.append(f"{first} | {NONE} | {NONE} | {NONE} | {NONE} |" if e is None else
                        f"{first} | {md(e.metric)} | {md(e.value_text())} | {e.cycle} "
                        f"| {md(e.task_id)} |")
    return ["", "## Hypotheses", "", *chart, "```", "", *rows]


def _pivots(summaries: list[CycleSummary], ids: dict[str, str]) -> list[str]:
    """A dotted edge from each refuted hypothesis to the sibling the study pivoted to."""
    edges: list[str] = []
    for s in summaries:
        d = s.decision
        if d and d.pursue in ids and d.hypotheses and d.hypotheses[0] in ids:
            edges.append(f"  {ids[d.hypotheses[0]]} -. pivot in cycle {s.cycle} .-> "
                         f"{ids[d.pursue]}")
    return edges


def _answer(report: StudyReport) -> list[str]:
    last = report.latest()
    if last is None:
        return []
    heading = "## Final answer" if report.status != "running" else "## Where it stands"
    decision = last.decision
    lines = ["", heading, "",
             f"After cycle {last.cycle}: {_decision(decision)}"
             + (f" — {md(decision.reason, 2 * REASON_CHARS)}" if decision else ""), ""]
    for h in report.tree.hypotheses:
        if h.status == "supported" and h.evidence:
            found = ", ".join(f"{md(e.shown())} (task {md(e.task_id)}, "
                              f"cycle {e.cycle})" for e in h.evidence)
            lines.append(f"- Supported {md(h.id)}: {md(h.statement, STATEMENT_CHARS)} — {found}")
    lines += [f"- Question {md(h.id)}: **{h.status}**" + (f", {md(h.concluded)}" if h.concluded
                                                          else "")
              for h in report.tree.children(None) if report.status != "running"]
    return [*lines, *criteria(report.policy.acceptance, last),
            *warnings(report.policy.acceptance, report.tree, last)]


def _carried(report: StudyReport) -> list[str]:
    ended = report.status != "running"
    if not report.carried:
        return ["", "## Carried tasks", "", "No failed or deferred task is carried forward."]
    intro = ("Failed and deferred tasks that never completed: no later cycle completed a task "
             "of the same id before the study ended:" if ended else
             "Failed and deferred tasks carried to the next cycles until a task of the same id "
             "completes:")
    lines = ["", "## Carried tasks", "", intro, "", "| task | cycle | status | reason | "
             "diagnosis | since |", "| --- | ---: | --- | --- | --- | --- |"]
    lines += [f"| {md(c.task_id)} | {c.cycle} | {c.status} | {md(c.reason) or NONE} "
              f"| {md(c.diagnosis) or NONE} | {md(_since(c, report.cycles, ended))} |"
              for c in report.carried]
    if report.carried_dropped:
        lines += ["", f"{plural(report.carried_dropped, 'older carried task')} left out to "
                  "keep the study small (their cycles' reports have them)."]
    return lines


def _since(task: CarriedTask, cycles: int, ended: bool) -> str:
    """What became of a carried task after its cycle: dropped by the later plans, or not."""
    later = f"cycle {cycles}" if task.cycle + 1 == cycles else f"cycles {task.cycle + 1}-{cycles}"
    if task.cycle < cycles:
        return f"dropped: the plans of {later} have no task {task.task_id}"
    return "unfinished in the last cycle" if ended else "carried to the next cycle"


def _links(report: StudyReport, folder: Path) -> list[str]:
    lines = ["", "## Cycle reports", ""]
    for r in report.reports:
        files = [link("results JSON", _relative(r.results_json, folder))] \
            if r.results_json else []
        if r.summary_md:
            files.append(link("summary", _relative(r.summary_md, folder)))
        problem = f" — {md(r.problem, 400)}" if r.problem else ""
        lines.append(f"- Cycle {r.cycle} ({md(r.run_id, 80)}): "
                     f"{' · '.join(files) or 'no report'}{problem}")
    return lines


def _relative(path: str, folder: Path) -> str:
    """``path`` relative to the study's folder when it can be, else as it is."""
    try:
        return Path(os.path.relpath(path, folder)).as_posix()
    except ValueError:  # another drive
        return path


def _plan(report: StudyReport, latest: RunReport | None) -> list[str]:
    last = report.latest()
    if last is None:
        return []
    lines = ["", f"## Plan of cycle {last.cycle}", ""]
    if latest is None:
        return [*lines, "Its report could not be read (see above), so its plan is not drawn."]
    return [*lines, *(mermaid(latest) or ["Its run made no task."])]
