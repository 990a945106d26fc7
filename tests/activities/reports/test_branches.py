"""The report's Branches section: the tree, a ranked table per group, the flowchart."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from activities.reports.branches import (
    CHANGES_SHOWN,
    branch_mermaid,
    comparisons,
    markdown_section,
    md,
    tree_lines,
)
from activities.reports.markdown import render_markdown
from workflows.contracts.branches import BranchChange, BranchRecord, BranchTree, LineScore
from workflows.contracts.results import RunReport, TaskResult

WHEN = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
ACC = {"name": "accuracy", "direction": "maximize"}
HOSTILE = "a|b`c`<script>alert(1)</script> --> x\n# heading\x1b[2J ```"


def branch(name: str, group: str = "g1", **extra: Any) -> BranchRecord:
    return BranchRecord.model_validate({"name": name, "from_task": "3", "from_phase": "execute",
                                        "group": group, "metric": ACC, **extra})


def score(rank: int, metric: float | None = None, *, completed: bool = True,
          passed: int = 2) -> LineScore:
    return LineScore(completed=completed, checks_passed=passed, checks_declared=2,
                     metric=metric, wall_s=12.5, cost_usd=0.0123, cpu_s=3.25, rank=rank)


def sweep(**main: LineScore) -> BranchTree:
    """A three-value sweep from 3:execute where lr-0.1 won and was selected."""
    return BranchTree(run_id="run-1", main=main or {"g1": score(2, 0.81234567)}, branches=[
        branch("lr-0.1", kind="optimisation", by="ada", status="completed",
               score=score(1, 0.912345678), selected=True, reused=["1", "2"],
               tasks={"3": "completed", "4": "completed"},
               changes=[BranchChange(task_id="3", field="args.lr", old=0.01, new=0.1)]),
        branch("lr-1", status="failed", reason="loss diverged",
               score=score(3, None, completed=False, passed=0),
               tasks={"3": "failed_final", "4": "blocked"}),
        branch("lr-9", status="cancelled", score=LineScore(checks_declared=2))])


def report(tree: BranchTree | None, **extra: Any) -> RunReport:
    tasks = [TaskResult(task_id=t, status="completed", status_reason="ok") for t in "1234"]
    return RunReport.model_validate({
        "run_id": "run-1", "plan_name": "p", "plan_sha256": "0" * 64, "status": "completed",
        "timestamp": "t", "started_at": WHEN, "finished_at": WHEN, "tasks": tasks,
        "dependencies": {"2": ["1"], "3": ["2"], "4": ["3"]}, "branches": tree, **extra})


def tables(markdown: str) -> list[list[list[str]]]:
    """Each table of the Markdown as rendered: rows of cells' text (header row first)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    found: list[list[list[str]]] = []
    cell = False
    for token in tokens:
        if token.type == "table_open":
            found.append([])
        elif token.type == "tr_open":
            found[-1].append([])
        elif token.type in ("th_open", "td_open"):
            cell = True
        elif token.type == "inline" and cell:
            found[-1][-1].append(_text(token))
            cell = False
    return found


def _text(token: Token) -> str:
    return "".join(child.content for child in token.children or [] if child.type == "text")


def html(markdown: str) -> list[str]:
    """Raw HTML the Markdown would pass to a browser."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    inline = [c for t in tokens for c in t.children or []]
    return [t.content for t in [*tokens, *inline] if t.type in ("html_block", "html_inline")]


def test_a_run_without_branches_has_no_branches_section() -> None:
    for tree in (None, BranchTree(run_id="run-1")):
        assert markdown_section(report(tree)) == []
        assert "## Branches" not in render_markdown(report(tree))
        assert comparisons(tree or BranchTree(run_id="run-1"), final=True) == []


def section_of(run: RunReport) -> str:
    """The Branches section of the run's whole Markdown report."""
    text = render_markdown(run)
    return text[text.index("## Branches"):text.index("## Completion by priority")]


def test_one_group_ranks_its_lines_best_first_with_four_significant_digits() -> None:
    text = section_of(report(sweep()))
    assert "- 3 branches in 1 group; selected: lr-0.1" in text
    [table] = tables(text)
    assert table[0] == ["rank", "line", "completed", "checks", "accuracy (maximize)",
                        "wall time", "model cost (USD)", "CPU time", "selected"]
    assert table[1] == ["1", "lr-0.1", "yes", "2/2", "0.9123", "12.5 s", "0.0123", "3.25 s",
                        "yes"]
    assert table[2][:5] == ["2", "main", "yes", "2/2", "0.8123"] and table[2][8] == ""
    assert table[3][:5] == ["3", "lr-1", "no", "0/2", "-"]  # failed: no metric
    assert table[4] == ["-", "lr-9", "cancelled", *["-"] * 5, ""]  # never compared: last
    assert "### From task 3 at execute (group g1)" in text


def test_the_tree_says_what_each_branch_changed_reused_and_how_it_ended() -> None:
    lines = tree_lines(sweep())
    assert lines[0] == ("from task 3 at execute (group g1): 3 branches, key metric accuracy "
                        "(maximize), selection best")
    assert "  * lr-0.1 [optimisation] from 3:execute by ada: completed (selected)" in lines
    assert "      changes: 3:args.lr 0.01 -> 0.1" in lines
    assert "      reused: 1, 2" in lines and "      tasks: 3 completed, 4 completed" in lines
    assert "  - lr-1 [human] from 3:execute: failed" in lines
    assert "      reason: loss diverged" in lines
    assert "  - lr-9 [human] from 3:execute: cancelled" in lines
    many = branch("big", changes=[BranchChange(task_id="3", field=f"args.a{n}", old=None, new=n)
                                  for n in range(CHANGES_SHOWN + 3)])
    [_, _, changes] = tree_lines(BranchTree(run_id="r", branches=[many]))
    assert changes.startswith("      changes: 3:args.a0 unset -> 0; 3:args.a1 unset -> 1")
    assert changes.endswith("; and 3 more")


def test_two_groups_each_compare_with_the_main_line_on_their_own_metric() -> None:
    tree = sweep(g1=score(2, 0.8), g2=score(1, 0.25))
    tree.branches.append(branch("seed-7", group="g2", from_phase="planned", status="completed",
                                metric={"name": "loss", "direction": "minimize"},
                                score=score(2, 0.5)))
    first, second = comparisons(tree, final=True)
    assert (first.group, second.group) == ("g1", "g2")
    assert second.headers[4] == "loss (minimize)"
    assert [row[1] for row in second.rows] == ["main", "seed-7"]
    assert second.rows[0][8] == "yes"  # no branch of g2 selected: the main line stays
    assert len(tables(section_of(report(tree)))) == 2


def test_the_main_line_is_undecided_until_compared_or_while_a_person_chooses() -> None:
    tree = BranchTree(run_id="r", branches=[branch("a", selection="person"),
                                            branch("b", selection="person")])
    [running] = comparisons(tree, final=False)  # siblings still run: not compared yet
    assert not running.waiting and [r[1:3] for r in running.rows] == [
        ["main", "-"], ["a", "running"], ["b", "running"]]
    assert running.rows[0][-1] == "undecided"
    for record, rank in zip(tree.branches, (2, 3), strict=True):
        record.status, record.score = "completed", score(rank, 0.8)
    tree.main["g1"] = score(1, 0.9)
    [choosing] = comparisons(tree, final=False, choosing=True)
    assert choosing.waiting and choosing.rows[0][1::7] == ["main", "undecided"]
    [chosen] = comparisons(tree, final=False)  # the gate is answered: main was kept
    assert not chosen.waiting and chosen.rows[0][-1] == "yes"
    [ended] = comparisons(tree, final=True, choosing=True)
    assert not ended.waiting and ended.rows[0][-1] == "yes"


def test_a_run_branched_from_a_closed_run_names_its_parent() -> None:
    section = "\n".join(markdown_section(report(sweep(), parent="assay-run-old-0123456789")))
    assert ("- Branched from the closed run assay-run-old-0123456789: its tasks were reused as "
            "verified, not run again; the line named main is that run's.") in section


def test_a_run_steered_without_branches_lists_steering_and_refusals() -> None:
    tree = BranchTree(run_id="r", steering=["ada paused", "ada resumed"],
                      refused=["bo: not an approver <b>"])
    section = "\n".join(markdown_section(report(tree)))
    assert section.startswith("\n## Steering\n") and "## Branches" not in section
    assert "- steering: ada paused\n- steering: ada resumed" in section
    assert "- refused: bo: not an approver \\<b\\>" in section and not html(section)


def test_hostile_names_stay_text_in_the_tree_the_table_and_the_figure() -> None:
    tree = BranchTree(run_id="r", main={HOSTILE: score(2, 1.0)}, branches=[
        branch("evil", group=HOSTILE, by=HOSTILE, hypothesis=HOSTILE, comment=HOSTILE,
               metric={"name": HOSTILE, "direction": "minimize"}, score=score(1, 0.5),
               selected=True, status="completed"),
        BranchRecord(name=HOSTILE, from_task=HOSTILE, group=HOSTILE, status="failed")])
    section = section_of(report(tree))
    assert html(section) == []
    flat = " ".join(HOSTILE.replace("\x1b", " ").split())
    [table] = tables(section)
    assert all(len(row) == 9 for row in table)  # no pipe split a cell
    assert table[0][4] == f"{flat} (minimize)" and table[3][1] == flat
    assert "\n# heading" not in section and "\x1b" not in section
    fence = re.search(r"^(`{3,})text$", section, re.M)
    assert fence is not None and len(fence.group(1)) > 3  # longer than the ``` inside
    assert f"      hypothesis: {flat}" in section


def test_the_flowchart_hangs_each_group_from_its_task_and_thickens_the_kept_line() -> None:
    tree = sweep()
    lines = branch_mermaid(tree, report(tree).tasks, report(tree).dependencies)
    assert lines[:2] == ["```mermaid", "flowchart LR"] and lines[-1] == "```"
    assert lines.count("```") == 1
    assert '  t2["3<br/>completed"]:::completed' in lines and "  t1 --> t2" in lines
    assert '  p0{"3:execute<br/>g1"}' in lines and "  t2 -.-> p0" in lines
    assert '  m0["main<br/>rank 2"]:::main' in lines and "  p0 --> m0" in lines
    assert '  b0_0["lr-0.1<br/>completed<br/>rank 1"]:::completed' in lines
    assert "  p0 ==> b0_0" in lines and "  class b0_0 kept" in lines
    assert '  b0_1["lr-1<br/>failed<br/>rank 3"]:::failed' in lines and "  p0 --> b0_1" in lines
    assert '  b0_2["lr-9<br/>cancelled<br/>not ranked"]:::cancelled' in lines
    defined = {line.split()[1] for line in lines if line.startswith("  classDef")}
    assert defined == {"completed", "failed", "cancelled", "main", "kept"}


def test_a_hostile_name_cannot_break_out_of_a_mermaid_label() -> None:
    tree = BranchTree(run_id="r", branches=[BranchRecord(name=HOSTILE, from_task="9",
                                                         status="running", group=HOSTILE)])
    lines = branch_mermaid(tree, [], {})
    assert lines.count("```") == 1 and lines[-1] == "```"
    node = re.compile(r'^  (\w+)(\["[^"<>`]*(<br/>[^"<>`]*)*"\]|\{"[^"<>`]*(<br/>[^"<>`]*)*"\})'
                      r"(:::\w+)?$")
    edge = re.compile(r"^  \w+ (-->|==>|-\.->) \w+$")
    other = re.compile(r"^  (classDef|class) \w+")
    body = lines[2:-1]
    assert all(node.match(x) or edge.match(x) or other.match(x) for x in body), body
    assert '  t0["9"]' in lines and "  t0 -.-> p0" in lines  # a task not in the report
    assert "#124;" in "\n".join(lines) and "#62;" in "\n".join(lines)  # | and > as entities


def test_a_cut_report_text_says_how_much_it_left_out() -> None:
    reason = "the key metric did not improve " * 20  # 619 characters on one line
    shown = md(reason, 240)
    assert shown.endswith("improve the key metr…\\[390 more\\]")  # Markdown-escaped
    assert len(shown) == 240 + 2
    assert md("fits", 240) == "fits"
