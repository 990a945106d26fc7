"""The study report: a three-cycle study (refuted, fixed, pivot supported) read in two minutes.

Each cycle's report is a real run report written by the run report's own writer; the study's
state comes from the study's rules (``close_cycle``) over those reports.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.reports.branches import md
from activities.reports.study import STUDY_JSON, StudyReport, StudyReportWriter
from activities.reports.study_figures import MAIN_LINE, CycleFacts, chart_of
from activities.reports.writer import ReportWriter
from tests.workflows.study.factories import decision, hypothesis, metric_test, plan, result
from workflows.contracts.alternatives import Metric
from workflows.contracts.branches import BranchRecord, BranchTree, LineScore
from workflows.contracts.cycles import StudyReportInput
from workflows.contracts.results import ReportPaths, RunReport, TaskResult, WriteReportInput
from workflows.contracts.study import StudyPolicy, StudyState
from workflows.study.carry import close_cycle

T0 = datetime(2026, 3, 1, tzinfo=UTC)
HOSTILE = "uses `x` ]] --> <script>alert(1)</script>\nnew line | pipe [link](http://e.x)"

H1 = hypothesis("H1", metric="auc", threshold=0.8, statement="the raw signal separates classes")
H2 = hypothesis("H2", metric="f1", threshold=0.7, statement="smoothing first lifts f1")
H3 = hypothesis("H3", parent="H2", metric="f1", threshold=0.8, statement=HOSTILE)


def cycle_report(n: int, tasks: list[TaskResult], cost: float, **fields: Any) -> RunReport:
    hypotheses = [H1, H2, H3] if n == 1 else [H2]
    linked = "H1" if n == 1 else "H2"
    the_plan = plan([decision("prep"), decision("fit", hypothesis=linked, dependencies=["prep"])],
                    hypotheses=[h.model_dump() for h in hypotheses])
    start = T0 + timedelta(hours=n)
    return RunReport.model_validate({
        "run_id": f"study-1.cycle-{n}", "plan_name": f"cycle {n}", "plan_sha256": "a" * 64,
        "status": "completed" if all(t.status == "completed" for t in tasks) else "partial",
        "timestamp": start.strftime("%Y%m%d_%H%M%S"), "started_at": start,
        "finished_at": start + timedelta(minutes=2 * n), "tasks": tasks, "plan": the_plan,
        "dependencies": {"fit": ["prep"]}, "model": {"calls": 1, "usage": {"cost_usd": cost}},
        **fields})


def branches(run_id: str) -> BranchTree:
    def line(name: str, score: float, rank: int) -> BranchRecord:
        return BranchRecord(name=name, from_task="fit", group="g1", metric=Metric(name="f1"),
                            status="completed", score=LineScore(metric=score, rank=rank),
                            selected=rank == 1)

    return BranchTree(run_id=run_id, branches=[line("wide", 0.66, 3), line("deep", 0.74, 1)],
                      main={"g1": LineScore(metric=0.71, rank=2)}, kept={"g1": "deep"})


def three_cycles() -> list[RunReport]:
    """Cycle 1 refutes H1 (pivot to H2); cycle 2's H2 task fails (fix); cycle 3 supports H2."""
    prep = result("prep")
    failed = result("fit", status="failed", reason="exit 1: smoothing window too wide")
    return [
        cycle_report(1, [prep, result("fit", metrics={"auc": 0.62, "f1": 0.55})], 1.25),
        cycle_report(2, [prep, failed], 0.5),
        cycle_report(3, [prep, result("fit", metrics={"f1": 0.74})], 2.0,
                     branches=branches("study-1.cycle-3")),
    ]


async def study_of(runs_dir: Path, runs: list[RunReport], max_cycles: int = 5,
                   no_progress_cycles: int = 2) -> StudyState:
    """The study's state after ``runs``, each written by the run report writer."""
    state = StudyState(study_id="study-1", goal="Does smoothing make the classes separable?",
                       policy=StudyPolicy(max_cycles=max_cycles, key_metric=Metric(name="f1"),
                                          no_progress_cycles=no_progress_cycles,
                                          acceptance=[metric_test("f1", ">=", 0.7)]))
    writer = ReportWriter(runs_dir)
    for run in runs:
        paths: ReportPaths = await ActivityEnvironment().run(writer.write_report,
                                                             WriteReportInput(report=run))
        state = close_cycle(state, run)
        last = state.summaries[-1].model_copy(update={"results_json": paths.results_json})
        state = state.model_copy(update={"summaries": [*state.summaries[:-1], last]})
    return state


async def write(root: Path, state: StudyState, **fields: Any) -> ReportPaths:
    req = StudyReportInput(state=state, folder="studies/study-1", **fields)
    return await ActivityEnvironment().run(StudyReportWriter(root).write_study_report, req)


def section(markdown: str, heading: str) -> str:
    return markdown.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def mermaid_blocks(markdown: str) -> list[list[str]]:
    return [block.split("\n") for block in re.findall(r"```mermaid\n(.*?)\n```", markdown,
                                                      flags=re.S)]


@pytest.fixture
async def written(tmp_path: Path) -> tuple[Path, StudyState, str]:
    state = await study_of(tmp_path / "runs", three_cycles())
    paths = await write(tmp_path, state, status="completed", started_at=T0 + timedelta(hours=1),
                        finished_at=T0 + timedelta(hours=3, minutes=7))
    assert paths.results_json == str(tmp_path / "studies/study-1" / STUDY_JSON)
    return tmp_path, state, Path(paths.summary_md).read_text(encoding="utf-8")


def test_the_state_is_the_three_cycle_story_the_report_tells(
        written: tuple[Path, StudyState, str]) -> None:
    _, state, _ = written
    decisions = [(s.decision.action, s.decision.pursue) for s in state.summaries if s.decision]
    assert decisions == [("pivot", "H2"), ("fix", None), ("stop", None)]
    assert [(h.id, h.status) for h in state.tree.hypotheses] == [
        ("H1", "refuted"), ("H2", "supported"), ("H3", "open")]


def test_the_story_says_each_decision_and_why_then_the_numbers(
        written: tuple[Path, StudyState, str]) -> None:
    markdown = written[2]
    assert markdown.startswith("# Study: Does smoothing make the classes separable? — "
                               "completed\n")
    story = section(markdown, "Story")
    assert "The study ran 3 cycles for $3.75 and is **completed**; its hypotheses: " \
        "1 supported, 1 refuted, 1 still open." in story
    assert "- Cycle 1 (2/2 tasks, completed): **pivot** → H2: H1 refuted: auc = 0.62 " \
        "(task fit), not \\>= 0.8; pivot to its sibling H2: smoothing first lifts f1" in story
    assert "- Cycle 2 (1/2 tasks, partial): **fix**: 1 task unfinished" in story
    assert "- Cycle 3 (2/2 tasks, completed): **stop**: acceptance criteria met: " \
        "f1 = 0.74 (task fit) \\>= 0.7" in story
    assert story.rstrip().endswith(
        "Final decision, after cycle 3: **stop** — acceptance criteria met: f1 = 0.74 "
        "(task fit) \\>= 0.7. f1: 0.55 in cycle 1 → 0.74 in cycle 3 (best 0.74, cycle 3, "
        "task fit).")


def test_the_cycle_table_has_a_row_per_cycle(written: tuple[Path, StudyState, str]) -> None:
    table = section(written[2], "Cycles")
    assert "| cycle | run | status | tasks completed | f1 | cost (USD) | wall time " \
        "| decision | reason |" in table
    rows = [line for line in table.splitlines() if re.match(r"\| \d+ \|", line)]
    assert [row.split(" | ")[:8] for row in rows] == [
        ["| 1", "study-1.cycle-1", "completed", "2/2", "0.55 (task fit)", "1.2500", "2 min 00 s",
         "**pivot** → H2"],
        ["| 2", "study-1.cycle-2", "partial", "1/2", "—", "0.5000", "4 min 00 s", "**fix**"],
        ["| 3", "study-1.cycle-3", "completed", "2/2", "0.74 (task fit)", "2.0000", "6 min 00 s",
         "**stop**"]]
    assert "![Key metric across cycles and branches](figures/metrics.png)" in table
    assert "- Chart: no verified f1 in cycle(s) 2: no point drawn" in table
    assert ("- Chart: The value axis includes 0, the reference, so changes are drawn to "
            "scale; brown dashes: the baseline, cycle 1's value, 0.55;") in table


def test_the_hypothesis_tree_is_drawn_with_statuses_and_tabled_with_evidence(
        written: tuple[Path, StudyState, str]) -> None:
    hypotheses = section(written[2], "Hypotheses")
    tree = mermaid_blocks(hypotheses)[0]
    assert tree[0] == "flowchart TD"
    assert '  h0["H1<br/>the raw signal separates classes<br/>refuted"]:::refuted' in tree
    assert '  h1["H2<br/>smoothing first lifts f1<br/>supported"]:::supported' in tree
    assert "  h1 --> h2" in tree and "  h0 -. pivot in cycle 1 .-> h1" in tree
    assert any(line.startswith("  classDef refuted fill:#c6282822") for line in tree)
    assert "| H1 | — | the raw signal separates classes | auc \\>= 0.8 | refuted (cycle 1) " \
        "| auc | 0.62 | 1 | fit |" in hypotheses
    assert "| H2 | — | smoothing first lifts f1 | f1 \\>= 0.7 | supported (cycle 3) " \
        "| f1 | 0.74 | 3 | fit |" in hypotheses


def test_the_answer_gives_the_criteria_with_their_values(
        written: tuple[Path, StudyState, str]) -> None:
    answer = section(written[2], "Final answer")
    assert "After cycle 3: **stop** — acceptance criteria met: f1 = 0.74 (task fit) \\>= 0.7" \
        in answer
    assert "- Supported H2: smoothing first lifts f1 — f1 = 0.74 (task fit, cycle 3)" in answer
    assert "| f1 \\>= 0.7 | yes | 0.74 (task fit) | f1 = 0.74 (task fit) \\>= 0.7 |" in answer


def test_carried_tasks_links_and_the_latest_plan(
        written: tuple[Path, StudyState, str]) -> None:
    root, state, markdown = written
    assert state.carried == []  # cycle 3 completed the task cycle 2 failed
    assert "No failed or deferred task is carried forward." in section(markdown, "Carried tasks")
    links = section(markdown, "Cycle reports")
    ts = (T0 + timedelta(hours=1)).strftime("%Y%m%d_%H%M%S")
    assert (f"- Cycle 1 (study-1.cycle-1): [results JSON](../../runs/study-1.cycle-1/"
            f"execution_results_{ts}.json) · [summary](../../runs/study-1.cycle-1/"
            f"execution_summary_{ts}.md)") in links
    for line in links.splitlines()[2:]:
        target = re.findall(r"\]\(([^)]+)\)", line)
        assert len(target) == 2 and all((root / "studies/study-1" / t).is_file()
                                        for t in target), line
    dag = mermaid_blocks(section(markdown, "Plan of cycle 3"))[0]
    assert dag[0] == "flowchart LR" and "  t0 --> t1" in dag
    assert '  t1["fit<br/>completed"]:::completed' in dag


async def test_a_carried_task_no_later_plan_had_is_marked_dropped(tmp_path: Path) -> None:
    plot = result("plot", status="failed", reason="exit 1: no display")
    runs = [cycle_report(1, [result("prep"), result("fit", metrics={"f1": 0.5}), plot], 1.0),
            *three_cycles()[1:]]
    state = await study_of(tmp_path / "runs", runs)
    assert [(c.task_id, c.cycle) for c in state.carried] == [("plot", 1)]
    ended = await write(tmp_path, state, status="completed")
    carried = section(Path(ended.summary_md).read_text(encoding="utf-8"), "Carried tasks")
    assert "never completed" in carried and "before the study ended" in carried
    assert ("| plot | 1 | failed | exit 1: no display | exit 1: no display | dropped: the plans "
            "of cycles 2-3 have no task plot |") in carried
    running = await write(tmp_path, state.model_copy(update={"cycles": 1}))
    carried = section(Path(running.summary_md).read_text(encoding="utf-8"), "Carried tasks")
    assert "| carried to the next cycle |" in carried and "until a task of the same id" in carried


def test_the_json_reads_back_as_the_state_with_status_and_files(
        written: tuple[Path, StudyState, str]) -> None:
    root, state, _ = written
    text = (root / "studies/study-1" / STUDY_JSON).read_text(encoding="utf-8")
    assert StudyState.model_validate_json(text) == state
    report = StudyReport.model_validate_json(text)
    assert (report.status, report.figures) == ("completed", ["figures/metrics.png"])
    assert report.chart_metric == Metric(name="f1")
    assert [(r.cycle, r.problem, bool(r.summary_md)) for r in report.reports] == [
        (1, "", True), (2, "", True), (3, "", True)]


def test_each_cycles_sweep_table_is_in_the_study_json_and_markdown(
        written: tuple[Path, StudyState, str]) -> None:
    root, _, markdown = written
    report = StudyReport.model_validate_json(
        (root / "studies/study-1" / STUDY_JSON).read_text(encoding="utf-8"))
    assert list(report.sweeps) == [3]
    table = report.sweeps[3][0]
    assert [(line.line, line.rank, line.kept) for line in table.lines] == [
        ("deep", 1, True), (MAIN_LINE, 2, False), ("wide", 3, False)]
    sweeps = section(markdown, "Sweeps")
    assert "### Cycle 3: Sweep from task fit at planned on f1 (maximize)" in sweeps
    assert "Kept: **deep** (no tie; selection best, tie rule simplest)." in sweeps
    assert "| deep | (as planned) | completed | - | 1 |" in sweeps


def test_the_chart_is_a_readable_png(written: tuple[Path, StudyState, str]) -> None:
    path = written[0] / "studies/study-1/figures/metrics.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(path) as image:
        assert image.size == (1000, 550)
        colours = {c for _, c in image.convert("RGB").getcolors(maxcolors=1 << 20) or []}
    assert len(colours) > 50
    for hexed in ("#1565c0", "#ef6c00", "#2e7d32"):  # main line, a branch, the kept line
        assert tuple(int(hexed[i:i + 2], 16) for i in (1, 3, 5)) in colours, hexed


def test_the_chart_puts_each_branch_line_beside_its_cycle() -> None:
    state = StudyState(study_id="s", goal="g")  # no key metric: the most reported one
    facts = [CycleFacts(cycle=1, tasks=[{"f1": 0.5, "auc": 0.6}, {"f1": 0.4}]),
             CycleFacts(cycle=2, tasks=[{"f1": 0.7}], branches=branches("r"))]
    chart = chart_of(state, facts)
    assert chart.metric == Metric(name="f1") and "most tasks reported (3)" in chart.why
    assert chart.values == {1: 0.5, 2: 0.7}
    assert [(p.name, p.value, p.kept) for p in chart.lines[2]] == [
        (MAIN_LINE, 0.71, False), ("wide", 0.66, False), ("deep", 0.74, True)]


async def test_a_missing_or_unreadable_cycle_report_is_said_not_fatal(tmp_path: Path) -> None:
    state = await study_of(tmp_path / "runs", three_cycles())
    gone = state.summaries[0].model_copy(update={"results_json": str(tmp_path / "gone.json")})
    bad = tmp_path / "runs" / "bad.json"
    bad.write_text('{"run_id": 3}', encoding="utf-8")
    broken = state.summaries[2].model_copy(update={"results_json": str(bad)})
    state = state.model_copy(update={"summaries": [gone, state.summaries[1], broken]})

    paths = await write(tmp_path, state)
    markdown = Path(paths.summary_md).read_text(encoding="utf-8")

    assert f"- Chart: cycle 1: cannot read {md(str(tmp_path))}/gone.json: No such file or " \
        "directory — its branches are not in the chart" in markdown
    assert f"- Chart: cycle 3: {md(str(bad))} is not a run's results JSON (7 errors)" in markdown
    assert "Its report could not be read (see above), so its plan is not drawn." in markdown
    assert "| 3 | study-1.cycle-3 | completed | 2/2 | 0.74 (task fit) |" in markdown  # summary
    assert (tmp_path / "studies/study-1/figures/metrics.png").is_file()
    report = StudyReport.model_validate_json(Path(paths.results_json).read_text("utf-8"))
    assert [bool(r.problem) for r in report.reports] == [True, False, True]


async def test_hostile_text_cannot_break_markdown_or_mermaid(tmp_path: Path) -> None:
    state = await study_of(tmp_path / "runs", three_cycles())
    state = state.model_copy(update={"goal": HOSTILE, "study_id": "s`|<b>"})
    markdown = Path((await write(tmp_path, state)).summary_md).read_text(encoding="utf-8")

    assert "<script>" not in markdown and "<b>" not in markdown
    assert not re.search(r"(?<!\\)\]\(http", markdown)  # no link made of the statement
    title = markdown.splitlines()[0]
    assert title.startswith("# Study: uses \\`x\\` \\]\\] --\\> \\<script\\>")
    row = next(line for line in markdown.splitlines() if line.startswith("| H3 |"))
    assert "new line \\| pipe" in row and row.count(" | ") == 8
    node = next(line for line in mermaid_blocks(markdown)[0] if line.startswith("  h2["))
    assert re.fullmatch(r'  h2\["[A-Za-z0-9 _.,:=+\-/#;<>]*"\]:::open', node), node
    assert "#96;x#96; #93;#93; --#62; #60;script#62;" in node
    for block in mermaid_blocks(markdown):
        assert all(not line.strip() or line.startswith("  ") or line.startswith("flowchart")
                   for line in block)


async def test_no_folder_given_means_the_studys_own(tmp_path: Path) -> None:
    state = StudyState(study_id="s", goal="g")
    req = StudyReportInput(state=state, folder=" ")
    paths = await ActivityEnvironment().run(StudyReportWriter(tmp_path).write_study_report, req)
    assert Path(paths.summary_md) == tmp_path / "studies" / "s" / "study.md"


async def test_a_studys_folders_and_files_are_its_users_only(tmp_path: Path) -> None:
    req = StudyReportInput(state=StudyState(study_id="s", goal="g"), folder=" ")
    paths = await ActivityEnvironment().run(StudyReportWriter(tmp_path).write_study_report, req)
    for folder in (tmp_path / "studies", tmp_path / "studies" / "s"):
        assert folder.stat().st_mode & 0o777 == 0o700
    for written in (paths.summary_md, paths.results_json):
        assert Path(written).stat().st_mode & 0o777 == 0o600


async def test_a_study_before_its_first_cycle_says_so_and_draws_nothing(tmp_path: Path) -> None:
    state = StudyState(study_id="s", first_plan="plan.json@" + "b" * 64)
    paths = await write(tmp_path, state)
    markdown = Path(paths.summary_md).read_text(encoding="utf-8")
    assert markdown.startswith("# Study: plan.json — running\n")
    assert f"- First plan: plan.json@{'b' * 64}" in markdown
    assert "No cycle has run yet." in markdown and "No hypothesis was proposed." in markdown
    assert not (tmp_path / "studies/s/figures").exists()
    assert StudyReport.model_validate_json(Path(paths.results_json).read_text("utf-8")).figures \
        == []


def test_a_study_without_numbers_has_nothing_to_chart_and_says_why() -> None:
    state = StudyState(study_id="s", goal="g")
    chart = chart_of(state, [CycleFacts(cycle=1, tasks=[{}]), CycleFacts(cycle=2)])
    assert (chart.metric, chart.values) == (None, {1: None, 2: None})
    assert chart.why == "no cycle reported a numeric verified metric"


@pytest.mark.parametrize(("study_id", "folder"), [
    ("../../outside", ""), ("..", ""), ("s", "/tmp/outside"), ("s", "studies/../../outside"),
    ("s", "../outside")])
async def test_a_study_report_never_leaves_the_data_folder(
        tmp_path: Path, study_id: str, folder: str) -> None:
    root = tmp_path / "data"
    req = StudyReportInput(state=StudyState(study_id=study_id, goal="g"), folder=folder)
    with pytest.raises(ApplicationError) as err:
        await ActivityEnvironment().run(StudyReportWriter(root).write_study_report, req)
    assert err.value.type == "ReportUnwritable" and err.value.non_retryable
    assert "single path component" in err.value.message
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


F1 = {"value": 0.72, "ci": [0.66, 0.78], "level": 0.95, "n": 200, "method": "bootstrap"}
"""An f1 above 0.7 on its point estimate whose 95 % interval includes 0.7."""


async def test_an_interval_that_includes_the_threshold_is_said_and_warned_of(
        tmp_path: Path) -> None:
    runs = [cycle_report(n, [result("prep"), result("fit", metrics={"f1": F1})], 1.0)
            for n in (2, 3)]
    state = await study_of(tmp_path / "runs", runs, max_cycles=2)
    paths = await write(tmp_path, state, status="completed")
    markdown = Path(paths.summary_md).read_text(encoding="utf-8")
    answer = section(markdown, "Final answer")
    assert "acceptance criteria met" not in markdown
    assert ("After cycle 2: **stop** — cycle limit reached: 2 of 2 cycles run; acceptance "
            "not established: f1 \\>= 0.7: the 95 % interval \\[0.66, 0.78\\] of f1 (task "
            "fit) includes 0.7") in answer
    assert ("| f1 \\>= 0.7 | inconclusive | 0.72 \\[0.66, 0.78\\] 95 % (task fit) | f1 \\>= 0.7: "
            "the 95 % interval \\[0.66, 0.78\\] of f1 (task fit) includes 0.7 |") in answer
    assert ("- Acceptance criterion f1 \\>= 0.7 is written on a point estimate, but f1 has an "
            "interval: it was judged on the interval") in answer
    assert "- Hypothesis H2's test f1 \\>= 0.7 is written on a point estimate" in answer
    hypotheses = section(markdown, "Hypotheses")
    assert "| inconclusive | f1 | 0.72 \\[0.66, 0.78\\] 95 % | 1 | fit |" in hypotheses


async def test_a_key_metric_better_within_its_intervals_stops_for_no_progress_and_says_why(
        tmp_path: Path) -> None:
    higher = {**F1, "value": 0.725, "ci": [0.66, 0.79]}
    runs = [cycle_report(n, [result("prep"), result("fit", metrics={"f1": f1})], 1.0)
            for n, f1 in ((2, F1), (3, higher))]
    state = await study_of(tmp_path / "runs", runs, no_progress_cycles=1)
    tie = ("key metric 0.725 [0.66, 0.79] vs best 0.72 [0.66, 0.78]: within intervals, not an "
           "improvement")
    last = state.summaries[-1]
    assert last.decision is not None and last.decision.action == "stop"
    assert tie in last.decision.reason
    markdown = Path((await write(tmp_path, state, status="completed")).summary_md).read_text(
        encoding="utf-8")
    assert md(tie) in markdown
    rows = [line for line in section(markdown, "Cycles").splitlines()
            if re.match(r"\| \d+ \|", line)]
    assert [row.split(" | ")[4] for row in rows] == [
        "0.72 \\[0.66, 0.78\\] (task fit)", "0.725 \\[0.66, 0.79\\] (task fit)"]


async def test_a_held_out_key_metric_allowed_by_the_flag_is_said(tmp_path: Path) -> None:
    policy = StudyPolicy(key_metric=Metric(name="test_f1"), allow_test_selection=True)
    paths = await write(tmp_path, StudyState(study_id="study-1", goal="g", policy=policy))
    markdown = Path(paths.summary_md).read_text(encoding="utf-8")
    assert ("The key metric test\\_f1 is held out: selecting on it was allowed by "
            "--allow-test-selection, so its best value is optimistic.") in markdown
    plain = StudyState(study_id="study-1", goal="g", policy=StudyPolicy(
        key_metric=Metric(name="cv_f1"), allow_test_selection=True))
    paths = await write(tmp_path, plain)
    assert "is held out" not in Path(paths.summary_md).read_text(encoding="utf-8")


def test_each_cycles_planning_kpis_are_tabled(written: tuple[Path, StudyState, str]) -> None:
    root, _, markdown = written
    rows = [line for line in section(markdown, "Planning KPIs by cycle").splitlines()
            if re.match(r"\| \d+ \|", line)]
    assert rows == ["| 1 | — | — | 0/0 | 0 |", "| 2 | — | — | 0/0 | 1 |",
                    "| 3 | — | — | 0/0 | 0 |"]
    study = StudyReport.model_validate_json(
        (root / "studies/study-1" / STUDY_JSON).read_text(encoding="utf-8"))
    assert study.cycle_kpis[2].unplanned_blockers == ["fit"]


async def test_an_ended_study_answers_each_root_hypothesis_and_marks_a_concluded_one(
        tmp_path: Path) -> None:
    from tests.workflows.study.factories import hypothesis, tree
    from workflows.study.conclusion import concluded

    state = await study_of(tmp_path / "runs", three_cycles())
    ended = concluded(tree(hypothesis("H0"), hypothesis("H0a", "H0", status="refuted",
                                                        decided_in=1)), 3)
    state = state.model_copy(update={"tree": ended})
    markdown = Path((await write(tmp_path, state, status="completed")).summary_md).read_text(
        encoding="utf-8")
    assert ("- Question H0: **refuted**, its own test never ran; from its children (H0a "
            "refuted): every child is refuted") in section(markdown, "Final answer")
    assert "| refuted (cycle 3, concluded) |" in section(markdown, "Hypotheses")
    running = await write(tmp_path, state, status="running")
    assert "- Question H0" not in Path(running.summary_md).read_text(encoding="utf-8")


def test_an_ended_study_opens_with_a_synthesis_whose_lines_cite_their_evidence(
        written: tuple[Path, StudyState, str]) -> None:
    markdown = written[2]
    assert markdown.index("## Synthesis") < markdown.index("## Story")
    said = section(markdown, "Synthesis")
    assert ("- H1 (the raw signal separates classes) is **refuted**: its test auc \\>= 0.8 "
            "decided in cycle 1 (cycle 1, task fit: auc = 0.62).") in said
    assert ("- H2 (smoothing first lifts f1) is **supported**: its test f1 \\>= 0.7 decided "
            "in cycle 3 (cycle 3, task fit: f1 = 0.74).") in said
    assert "- Acceptance criterion f1 \\>= 0.7 holds (cycle 3, task fit: f1 = 0.74)." in said
    assert "- Key metric f1: best in cycle 3 (task fit: f1 = 0.74)." in said
    assert "- H3 (" in said and "is open: no task reported its test's metric." in said


async def test_the_synthesis_gives_intervals_and_says_what_is_not_established(
        tmp_path: Path) -> None:
    runs = [cycle_report(n, [result("prep"), result("fit", metrics={"f1": F1})], 1.0)
            for n in (2, 3)]
    state = await study_of(tmp_path / "runs", runs, max_cycles=2)
    ended = Path((await write(tmp_path, state, status="completed")).summary_md)
    said = section(ended.read_text(encoding="utf-8"), "Synthesis")
    assert ("- Acceptance criterion f1 \\>= 0.7 is not established (cycle 2, task fit: "
            "f1 = 0.72 \\[0.66, 0.78\\] 95 %).") in said
    assert "f1 = 0.72 \\[0.66, 0.78\\] 95 %" in said
    running = Path((await write(tmp_path, state, status="running")).summary_md)
    assert "## Synthesis" not in running.read_text(encoding="utf-8")


async def test_an_escalation_is_told_in_the_story_and_marked_in_the_tree(tmp_path: Path) -> None:
    failed = result("fit", status="failed", reason="exit 1: smoothing window too wide")
    runs = [three_cycles()[0], *(cycle_report(n, [result("prep"), failed], 0.5)
                                 for n in (2, 3))]
    state = await study_of(tmp_path / "runs", runs)
    paths = await write(tmp_path, state, status="running", started_at=T0)
    markdown = Path(paths.summary_md).read_text(encoding="utf-8")
    assert ("- Cycle 3 (1/2 tasks, partial): **pivot** → H3 (**escalated**: abandons H2): "
            "fail fast: no progress in the last 2 cycles (2 to 3; escalation after 2); abandon "
            "H2 and pursue H3") in section(markdown, "Story")
    assert "| inconclusive, abandoned in cycle 3 |" in section(markdown, "Hypotheses")
