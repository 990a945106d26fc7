"""A run's branches as people read them: the tree, a comparison per group, a flowchart.

The run's :class:`BranchTree` (its ``branches`` query, and the report's results JSON) says what
each branch changed and how it ran. The same rows serve the terminal and the report:
:func:`tree_lines` are plain lines (``assay branches`` prints them, the report fences them) and
:func:`comparisons` a table per group of siblings (``assay branches`` draws it with rich, the
report in Markdown). Names, hypotheses and metric names come from people and plans, so every
one is shown on one printable line, cut to a length, and escaped where it lands: Markdown
punctuation behind a backslash, Mermaid labels as entity codes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from activities.events.format import one_line
from activities.reports.figures import STATUS_COLOURS
from activities.reports.numbers import duration, number, value
from activities.reports.tasks import fenced
from workflows.contracts.alternatives import Metric
from workflows.contracts.branches import MAIN_LINE, BranchRecord, BranchTree, LineScore
from workflows.contracts.plaintext import clip
from workflows.contracts.plan import Scalar
from workflows.contracts.results import RunReport, TaskResult
from workflows.contracts.words import plural

NAME_CHARS = 60
HYPOTHESIS_CHARS = 300
TEXT_CHARS = 200
CHANGES_SHOWN = 12
"""A branch's modifications listed in its tree entry (the results JSON has them all)."""
LOG_SHOWN = 20
"""Steering actions and refusals the tree lists (the latest)."""
HEADERS: tuple[str, ...] = ("rank", "line", "completed", "checks", "metric", "wall time",
                            "model cost (USD)", "CPU time", "selected")
METRIC_COLUMN = HEADERS.index("metric")
MISSING = "-"


@dataclass(frozen=True)
class Comparison:
    """One group of sibling branches and the main line, ranked: a table of plain text."""

    group: str
    from_task: str
    from_phase: str
    metric: Metric | None
    selection: str
    rows: list[list[str]]
    """One row per line (``HEADERS``), best first; unranked lines last."""
    waiting: bool = False
    """The siblings were compared and a person has yet to choose between them."""

    @property
    def headers(self) -> list[str]:
        """``HEADERS``, the metric's column named by the metric and its direction."""
        named = list(HEADERS)
        if self.metric is not None:
            named[METRIC_COLUMN] = f"{text(self.metric.name, NAME_CHARS)} ({self.metric.direction})"
        return named


def text(item: str, limit: int = TEXT_CHARS) -> str:
    """``item`` on one printable line of at most ``limit`` characters; a cut says how much."""
    return clip(one_line(item), limit)


def groups(tree: BranchTree) -> dict[str, list[BranchRecord]]:
    """The tree's branches by group (siblings compared together), in the order they started."""
    grouped: dict[str, list[BranchRecord]] = {}
    for record in tree.branches:
        grouped.setdefault(record.group, []).append(record)
    return grouped


def group_metric(members: list[BranchRecord]) -> Metric | None:
    """The key metric a group is compared on (its first branch naming one)."""
    return next((b.metric for b in members if b.metric is not None), None)


def main_kept(tree: BranchTree, group: str, *, final: bool, choosing: bool) -> bool | None:
    """Whether the main line stays the run's in ``group`` (None: not decided yet).

    The line the run kept says so once the group is decided; a selected branch replaces
    the main line. Until the run has ended, a group not compared yet (the
    run adds the main line's score when its siblings have all finished), or one a person is
    choosing for at the ``branch`` gate, is undecided; otherwise the main line is kept.
    """
    if group in tree.kept:
        return tree.kept[group] == MAIN_LINE
    members = [b for b in tree.branches if b.group == group]
    if any(b.selected for b in members):
        return False
    if final:
        return True
    if group not in tree.main:
        return None
    return None if choosing and any(b.selection == "person" for b in members) else True


def comparisons(tree: BranchTree, *, final: bool, choosing: bool = False) -> list[Comparison]:
    """A ranked comparison of each group of siblings with the main line.

    Args:
        tree: the run's branch tree.
        final: the run has ended (a choice nobody made leaves the main line the run's).
        choosing: the run waits at a ``branch`` gate for a person's choice.
    """
    tables: list[Comparison] = []
    for group, members in groups(tree).items():
        metric = group_metric(members)
        kept = main_kept(tree, group, final=final, choosing=choosing)
        lines: list[tuple[str, LineScore, str, str]] = [
            (MAIN_LINE, tree.main.get(group, LineScore()), "", _mark(kept))]
        lines += [(b.name, b.score, b.status, "yes" if b.selected else "") for b in members]
        lines.sort(key=lambda line: (line[1].rank == 0, line[1].rank, line[0] != MAIN_LINE,
                                     line[0]))
        first = members[0]
        tables.append(Comparison(
            group=group, from_task=first.from_task, from_phase=first.from_phase, metric=metric,
            selection=first.selection, rows=[_row(*line) for line in lines],
            waiting=kept is None and group in tree.main))
    return tables


def _mark(kept: bool | None) -> str:
    return {True: "yes", False: "", None: "undecided"}[kept]


def _row(name: str, score: LineScore, status: str, selected: str) -> list[str]:
    """A line's row; one not compared yet (rank 0) has its status and no score."""
    if not score.rank:
        return [MISSING, text(name, NAME_CHARS), status or MISSING, *[MISSING] * 5, selected]
    return [str(score.rank), text(name, NAME_CHARS), "yes" if score.completed else "no",
            f"{score.checks_passed}/{score.checks_declared}",
            MISSING if score.metric is None else number(score.metric),
            duration(score.wall_s), f"{score.cost_usd:.4f}", duration(score.cpu_s), selected]


def tree_lines(tree: BranchTree) -> list[str]:
    """The branch tree as plain, printable lines: each group, then each of its branches."""
    lines: list[str] = []
    for group, members in groups(tree).items():
        first, metric = members[0], group_metric(members)
        on = (f"key metric {text(metric.name, NAME_CHARS)} ({metric.direction})"
              if metric is not None else "no key metric")
        label = f" (group {text(group, NAME_CHARS)})" if group else ""
        lines.append(f"from task {text(first.from_task, NAME_CHARS)} at {first.from_phase}"
                     f"{label}: {plural(len(members), 'branch', 'branches')}, "
                     f"{on}, selection {first.selection}")
        for record in members:
            lines += _branch_lines(record)
    return lines


def _branch_lines(b: BranchRecord) -> list[str]:
    """One branch: name, kind, where from, who asked, its status; then what it is about."""
    head = (f"  {'*' if b.selected else '-'} {text(b.name, NAME_CHARS)} [{b.kind}] from "
            f"{text(b.from_task, NAME_CHARS)}:{b.from_phase}"
            + (f" by {text(b.by, NAME_CHARS)}" if b.by else "")
            + (f" ({b.channel})" if b.by and b.channel else "")
            + f": {b.status}" + (" (selected)" if b.selected else ""))
    lines = [head]
    about = [("hypothesis", text(b.hypothesis, HYPOTHESIS_CHARS)),
             ("comment", text(b.comment)), ("reason", text(b.reason)),
             ("changes", _changes(b)),
             ("code", f"a person's, sha256 {b.code_sha256[:16]}" if b.code_sha256 else ""),
             ("reused", text(", ".join(b.reused), TEXT_CHARS)),
             ("tasks", text(", ".join(f"{tid} {status}" for tid, status in b.tasks.items()))),
             ("workflow", text(b.workflow_id)),
             ("linked run", text(b.linked_run))]
    lines += [f"      {what}: {shown}" for what, shown in about if shown]
    return lines


def _changes(b: BranchRecord) -> str:
    """``3:args.lr 0.01 -> 0.1; ...``: each modification with its old and new value."""
    shown = [f"{change.task_id}:{change.field} {_scalar(change.old)} -> {_scalar(change.new)}"
             for change in b.changes[:CHANGES_SHOWN]]
    if len(b.changes) > CHANGES_SHOWN:
        shown.append(f"and {len(b.changes) - CHANGES_SHOWN} more")
    return text("; ".join(shown), TEXT_CHARS * 4)


def _scalar(item: Scalar | None) -> str:
    return "unset" if item is None else value(item)


def log_lines(tree: BranchTree) -> list[str]:
    """What people did to the run and the requests it refused (the latest of each)."""
    return ([f"steering: {text(entry)}" for entry in tree.steering[-LOG_SHOWN:]]
            + [f"refused: {text(entry)}" for entry in tree.refused[-LOG_SHOWN:]])


def markdown_section(report: RunReport) -> list[str]:
    """The report's "Branches" section: the tree, a table per group, a flowchart.

    A run without branches that people steered has a "Steering" section instead; one nobody
    branched or steered, nothing.
    """
    tree = report.branches or BranchTree(run_id=report.run_id)
    lines: list[str] = []
    if report.parent:
        lines.append(f"- Branched from the closed run {md(report.parent)}: its tasks were "
                     "reused as verified, not run again; the line named main is that run's.")
    if tree.branches:
        selected = [md(b.name, NAME_CHARS) for b in tree.branches if b.selected]
        lines.append(f"- {plural(len(tree.branches), 'branch', 'branches')} in "
                     f"{plural(len(groups(tree)), 'group')}; selected: "
                     f"{', '.join(selected) or 'none (the main line is kept)'}")
        lines += ["", *fenced("\n".join(tree_lines(tree)))]
        for table in comparisons(tree, final=True):
            lines += _markdown_table(table)
        lines += ["", *branch_mermaid(tree, report.tasks, report.dependencies)]
    log = log_lines(tree)
    if log:
        lines += ["", *(f"- {md(entry)}" for entry in log)]
    heading = "## Branches" if tree.branches or report.parent else "## Steering"
    return ["", heading, "", *lines] if lines else []


def _markdown_table(table: Comparison) -> list[str]:
    label = f" (group {md(table.group, NAME_CHARS)})" if table.group else ""
    head = [md(cell, NAME_CHARS * 2) for cell in table.headers]
    lines = ["", f"### From task {md(table.from_task, NAME_CHARS)} at {table.from_phase}{label}",
             "", f"Selection: {table.selection}"
             + ("; waiting for a person to choose." if table.waiting else "."), "",
             "| " + " | ".join(head) + " |",
             "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    lines += ["| " + " | ".join(md(cell) for cell in row) + " |" for row in table.rows]
    return lines


_MARKDOWN_SPECIAL = frozenset("\\`*_[]<>|#!~&$")


def md(item: str, limit: int = TEXT_CHARS) -> str:
    """``item`` as literal Markdown text on one line: its punctuation cannot make markup."""
    return "".join(f"\\{ch}" if ch in _MARKDOWN_SPECIAL else ch for ch in text(item, limit))


_MERMAID_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _.,:=+-/")
BRANCH_COLOURS = {**STATUS_COLOURS, "running": "#1565c0", "partial": "#f9a825",
                  "other": "#757575"}
"""Colour of each task and branch status in the flowchart."""


def label(*parts: str) -> str:
    """A Mermaid node label: each part on its own line, any other character an entity code."""
    return "<br/>".join("".join(ch if ch in _MERMAID_SAFE else f"#{ord(ch)};"
                                for ch in text(part, NAME_CHARS)) for part in parts if part)


def branch_mermaid(tree: BranchTree, tasks: Sequence[TaskResult],
                   dependencies: Mapping[str, list[str]]) -> list[str]:
    """The tree as a Mermaid flowchart: the main line's tasks, each branch point and its lines.

    Each group hangs from its task as a branch point; the main line and each branch leave it
    as nodes coloured by status, the line kept for the run on a thick edge with a thick border.
    """
    main = [t for t in tasks if t.branch is None]
    ids = {t.task_id: f"t{n}" for n, t in enumerate(main)}
    lines = ["```mermaid", "flowchart LR"]
    lines += [f'  {ids[t.task_id]}["{label(t.task_id, t.status)}"]:::{_status(t.status)}'
              for t in main]
    lines += [f"  {ids[dep]} --> {ids[t.task_id]}" for t in main
              for dep in dependencies.get(t.task_id, []) if dep in ids]
    used = {_status(t.status) for t in main}
    for g, (group, members) in enumerate(groups(tree).items()):
        first, point = members[0], f"p{g}"
        if first.from_task not in ids:
            ids[first.from_task] = f"t{len(ids)}"
            lines.append(f'  {ids[first.from_task]}["{label(first.from_task)}"]')
        lines += [f'  {point}{{"{label(first.from_task + ":" + first.from_phase, group)}"}}',
                  f"  {ids[first.from_task]} -.-> {point}"]
        score = tree.main.get(group, LineScore())
        kept = main_kept(tree, group, final=True, choosing=False)
        lines += _line_node(f"m{g}", point, label(MAIN_LINE, _ranked(score)), "main",
                            kept=bool(kept))
        for n, b in enumerate(members):
            lines += _line_node(f"b{g}_{n}", point, label(b.name, b.status, _ranked(b.score)),
                                _status(b.status), kept=b.selected)
            used.add(_status(b.status))
    for status in sorted(used):
        colour = BRANCH_COLOURS[status]
        lines.append(f"  classDef {status} fill:{colour}22,stroke:{colour},color:#000")
    lines += ["  classDef main fill:#ffffff,stroke:#424242,color:#000",
              "  classDef kept stroke-width:4px", "```"]
    return lines


def _line_node(node: str, point: str, shown: str, status: str, *, kept: bool) -> list[str]:
    edge = "==>" if kept else "-->"
    lines = [f'  {node}["{shown}"]:::{status}', f"  {point} {edge} {node}"]
    return [*lines, f"  class {node} kept"] if kept else lines


def _ranked(score: LineScore) -> str:
    return f"rank {score.rank}" if score.rank else "not ranked"


def _status(status: str) -> str:
    """A status as a Mermaid class name (an unknown one as ``other``)."""
    return status if status in BRANCH_COLOURS else "other"
