"""Sweeps in one table: every line of a group of branches, what it changed, measured and cost.

A group of sibling branches (a sweep, or a plan's alternatives) and the main line are one
:class:`SweepTable`: per line its parameters (what it changed), every verified metric of its
branch-point task (estimates with their intervals), its status, rank and cost, whether it tied
with the first line within the key metric's intervals, and which line was kept and why. The
run's report writer builds the tables (reading each line's whole task result, whether or not
it was kept) into the results JSON and the Markdown; the study's report shows each cycle's.
"""

from __future__ import annotations

from collections.abc import Callable

from activities.reports.branches import NAME_CHARS, groups, md
from activities.reports.numbers import duration
from workflows.contracts.branches import (
    MAIN_LINE,
    BranchRecord,
    BranchTree,
    LineScore,
    SweepLine,
    SweepTable,
)
from workflows.contracts.estimates import is_estimate, number, shown
from workflows.contracts.results import TaskResult

METRIC_COLUMNS = 8
"""Metrics a Markdown table shows (the key metric first); the results JSON has them all."""
MISSING = "-"

PointReader = Callable[[str, str], TaskResult | None]
"""The whole result of a line's branch-point task: ``(line, task_id)`` → result or None."""


def sweep_tables(tree: BranchTree, read: PointReader) -> list[SweepTable]:
    """One table per group of ``tree``, each line's metrics read with ``read``."""
    tables: list[SweepTable] = []
    for group, members in groups(tree).items():
        first = members[0]
        tied = set(tree.tied.get(group, []))
        kept = tree.kept.get(group, "")
        lines = [_line(MAIN_LINE, {}, "", tree.main.get(group, LineScore()),
                       read(MAIN_LINE, first.from_task), kept, tied)]
        lines += [_line(b.name, _parameters(b), b.status, b.score, read(b.name, b.from_task),
                        kept, tied) for b in members]
        lines.sort(key=lambda x: (x.rank == 0, x.rank, x.line != MAIN_LINE, x.line))
        tables.append(SweepTable(
            group=group, from_task=first.from_task, from_phase=first.from_phase,
            metric=first.metric, selection=first.selection, ties=first.ties, kept=kept,
            why=tree.why.get(group, ""), tie=bool(tied), lines=lines))
    return tables


def _line(name: str, parameters: dict[str, object], status: str, score: LineScore,
          point: TaskResult | None, kept: str, tied: set[str]) -> SweepLine:
    metrics = {k: v for k, v in (point.metrics if point is not None else {}).items()
               if number(v) is not None or is_estimate(v)}
    return SweepLine.model_validate({
        "line": name, "parameters": parameters,
        "status": status or ("completed" if score.completed else
                             point.status if point is not None else ""),
        "metrics": metrics, "rank": score.rank, "cost_usd": score.cost_usd,
        "cpu_s": score.cpu_s, "wall_s": score.wall_s, "kept": name == kept,
        "tied": name in tied})


def _parameters(record: BranchRecord) -> dict[str, object]:
    prefix = f"{record.from_task}:"
    return {(c.field if c.task_id == record.from_task else f"{c.task_id}:{c.field}")
            .removeprefix(prefix): c.new for c in record.changes}


def sweep_markdown(tables: list[SweepTable], heading: str = "###") -> list[str]:
    """The tables in Markdown: a heading per group, why its line was kept, then every line."""
    lines: list[str] = []
    for table in tables:
        columns = _columns(table)
        on = (f" on {md(table.metric.name, NAME_CHARS)} ({table.metric.direction})"
              if table.metric is not None else "")
        lines += ["", f"{heading} Sweep from task {md(table.from_task, NAME_CHARS)} at "
                      f"{table.from_phase}{on}", ""]
        verdict = "a tie" if table.tie else "no tie"
        kept = md(table.kept, NAME_CHARS) if table.kept else "not decided"
        lines.append(f"Kept: **{kept}** ({verdict}; selection {table.selection}, tie rule "
                     f"{table.ties}). {md(table.why, 600)}".rstrip())
        head = ["line", "parameters", "status", *(md(c, NAME_CHARS) for c in columns),
                "rank", "cost (USD)", "CPU time", "kept"]
        lines += ["", "| " + " | ".join(head) + " |",
                  "| " + " | ".join(["---"] * 3 + ["---:"] * (len(columns) + 3) + ["---"])
                  + " |"]
        lines += ["| " + " | ".join(_cells(line, columns)) + " |" for line in table.lines]
    return lines


def _columns(table: SweepTable) -> list[str]:
    """The metrics shown: the key metric first, then the others as the lines first have them."""
    names: list[str] = [table.metric.name] if table.metric is not None else []
    for line in table.lines:
        names += [n for n in line.metrics if n not in names]
    return names[:METRIC_COLUMNS]


def _cells(line: SweepLine, columns: list[str]) -> list[str]:
    params = "; ".join(f"{k}={v}" for k, v in line.parameters.items()) or "(as planned)"
    mark = ("kept, tied" if line.kept and line.tied else "kept" if line.kept
            else "tied" if line.tied else "")
    metrics = [shown(line.metrics[c]) if c in line.metrics else MISSING for c in columns]
    return [md(line.line, NAME_CHARS), md(params, 300), md(line.status or MISSING),
            *(md(m) for m in metrics), str(line.rank) if line.rank else MISSING,
            f"{line.cost_usd:.4f}", duration(line.cpu_s), mark]
