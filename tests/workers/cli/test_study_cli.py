"""``assay study`` and its companions: bad input refused before anything is sent, and a real
study driven from the command line (start with a plans folder, status at the cycle gate,
approve with ``--choose``, hypotheses, report, stop, ``assay plan`` routed to the study).

The study runs on the dev server with one worker serving every queue (the fake sandbox
reports a job's ``score`` argument as its metric, so which hypothesis a cycle supports or
refutes is known in advance); the study's report is written by the real writer.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment
from typer.testing import CliRunner

from activities.artifacts.store import LocalArtifactStore
from activities.reports.study import StudyReportWriter
from activities.reports.writer import ReportWriter
from activities.study.cycles import StudyCycles
from client.study import StudyClient, start_key
from tests.support.e2e import ROOT, worker_env
from tests.support.waiting import wait_for
from tests.workers.cli.test_cli import cli
from tests.workers.cli.test_cli import nowhere as nowhere  # a fixture
from tests.workflows.harness import Harness
from tests.workflows.study.factories import summary
from workers.cli.main import app
from workers.cli.studies import key_text
from workers.cli.study import StudyOptions, study_input
from workers.settings import Settings
from workflows.constants import cycle_run_id
from workflows.contracts.alternatives import Metric
from workflows.contracts.cycles import StudyProgress
from workflows.contracts.pools import Pool
from workflows.contracts.study import StudyPolicy

close_cycle = StudyCycles().close_cycle  # reports on this host only
resolve_reuse = StudyCycles().resolve_reuse  # reports on this host only

runner = CliRunner()
H1 = {"id": "H1", "statement": "a small step fits", "test": {
    "metric": "score", "op": ">", "threshold": 0.8}}
H2 = {"id": "H2", "statement": "a larger step fits", "test": {
    "metric": "score", "op": ">", "threshold": 0.8}}


def plan_file(path: Path, task_id: str, score: float, hypothesis: str,
              *proposals: dict[str, Any]) -> Path:
    """A plan file of one job whose (fake) run reports ``score``, linked to ``hypothesis``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"decisions": [{
        "task_id": task_id, "priority": "HIGH", "action": f"fit {task_id}",
        "acceptance_criteria": ["it works"], "dependencies": [], "hypothesis": hypothesis,
        "job": {"code": "print('hi')\n", "args": {"score": score},
                "expected_artifacts": ["out.txt"], "expected_metrics": ["score"]}}],
        "hypotheses": list(proposals)}))
    return path


def start(*args: str) -> Any:
    return runner.invoke(app, ["study", *args])


# --- refused before anything is sent -------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (["--accept", "score"], "--accept 'score': write METRIC OP VALUE"),
    (["--accept", "score >= "], "write METRIC OP VALUE"),
    (["--accept", "score => 1"], "write METRIC OP VALUE"),
    (["--accept", "score >= high"], ">= compares numbers; give a number"),
    (["--accept", "score >= NaN"], ">= compares numbers"),
    (["--accept", "score\x00 >= 1"], "--accept has control characters"),
    (["--accept", "s" * 5000 + " >= 1"], "write METRIC OP VALUE"),
    (["--accept", "s" * 200 + " >= 1"], "String should have at most 128 characters"),
    (["--key-metric", "score:up"], "--key-metric 'score:up': the direction is maximize or "
                                   "minimize"),
    (["--key-metric", ":minimize"], "--key-metric needs a name of 1 to 128 characters"),
    (["--budget-usd", "0"], "--budget-usd 0.0: give a positive number of dollars"),
    (["--budget-usd", "nan"], "give a positive number of dollars"),
    (["--cycles", "0"], "Invalid value for '--cycles'"),
    (["--cycles", "101"], "Invalid value for '--cycles'"),
    (["--plans", "/no/such/folder"], "--plans /no/such/folder: no such file or folder"),
    (["--human-gate", "launch"], "Invalid value for '--human-gate'"),
])
def test_bad_options_exit_2_before_connecting(nowhere: str, args: list[str],
                                              message: str) -> None:
    result = start("does a larger step fit better?", *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "cannot reach Temporal" not in result.stderr


@pytest.mark.parametrize(("goal", "message"), [
    ("   ", "the research goal is empty"),
    ("fit\x07 it", "a control character (U+0007) at character 4"),
    ("x" * 20_001, "over the"),
])
def test_bad_goals_exit_2(nowhere: str, goal: str, message: str) -> None:
    result = start(goal)
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_plans_folder_problems_name_the_file(nowhere: str, tmp_path: Path) -> None:
    first = plan_file(tmp_path / "plan.json", "fit1", 0.5, "H1", H1, H2)
    empty = tmp_path / "empty"
    empty.mkdir()
    result = start(str(first), "--plans", str(empty))
    assert result.exit_code == 2 and "the folder has no .json plan files" in result.stderr
    bad = tmp_path / "bad"
    plan_file(bad / "cycle-2.json", "fit2", 0.9, "H2", H2)
    (bad / "cycle-3.json").write_text('{"decisions": [{"task_id": 1}]}')
    result = start(str(first), "--plans", str(bad))
    assert result.exit_code == 2
    assert f"{bad / 'cycle-3.json'}: invalid plan:" in result.stderr
    assert "task 1 (decisions[0]), field action: Field required" in result.stderr
    (bad / "cycle-3.json").write_text("{" * 100_000)
    result = start(str(first), "--plans", str(bad))
    assert result.exit_code == 2 and str(bad / "cycle-3.json") in result.stderr
    folder = tmp_path / "three"
    for n in (2, 3, 4):
        plan_file(folder / f"cycle-{n}.json", f"fit{n}", 0.9, "H2", H2)
    result = start(str(first), "--plans", str(folder), "--cycles", "3")
    assert result.exit_code == 2
    assert "4 plans given for at most 3 cycles; pass --cycles 4 or more" in result.stderr
    result = start(str(first), "--data", str(first))
    assert result.exit_code == 2 and "--data goes with a goal in words" in result.stderr


def test_an_oversize_study_is_refused_with_the_limit(nowhere: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    first = plan_file(tmp_path / "plan.json", "fit1", 0.5, "H1", H1, H2)
    for n in range(2, 12):
        plan_file(tmp_path / "more" / f"cycle-{n}.json", f"fit{n}", 0.9, "H2", H2)
    monkeypatch.setenv("ASSAY_MAX_PLAN_BYTES", "4000")
    result = start(str(first), "--plans", str(tmp_path / "more"), "--cycles", "20")
    assert result.exit_code == 2
    assert "over the 4,000-byte limit; give fewer or smaller plans" in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--choose", "launch"], "--choose 'launch': choose one of iterate, fix, stop, pivot:H"),
    (["--choose", "stop:now"], "choose one of"),
    (["--choose", "pivot:"], "choose one of"),
    (["--choose", "iterate", "--reject"], "--choose and --reject contradict each other"),
    (["--task", "1"], "the cycle gate is a study's own: it takes no --task or --branch"),
    (["--by", "ada\x1b[2J"], "--by has control characters"),
])
def test_bad_cycle_decisions_exit_2(nowhere: str, args: list[str],
                                    message: str) -> None:
    result = runner.invoke(app, ["approve", "assay-study-x-0", "--gate", "cycle", *args])
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_stop_and_run_refuse_what_is_not_theirs(nowhere: str) -> None:
    result = runner.invoke(app, ["stop", "assay-study-x-0", "--by", "a\x00b"])
    assert result.exit_code == 2 and "--by has control characters" in result.stderr
    result = runner.invoke(app, ["stop", "assay-study-x-0", "--by", "ada", "-m", "x" * 5000])
    assert result.exit_code == 2 and "invalid stop: comment" in result.stderr
    result = runner.invoke(app, ["run", "a goal", "--human-gate", "cycle"])
    assert result.exit_code == 2 and "the cycle gate is a study's" in result.stderr


def test_the_plans_folder_runs_in_name_order_and_names_the_start(tmp_path: Path) -> None:
    settings = Settings.model_validate({"data_dir": tmp_path / "assay"})
    first = plan_file(tmp_path / "plan.json", "fit1", 0.5, "H1", H1, H2)
    for n in (10, 2, 3):
        plan_file(tmp_path / "more" / f"cycle-{n}.json", f"fit{n}", 0.9, "H2", H2)
    opts = StudyOptions(by="ada", plans=[tmp_path / "more"], cycles=5, accept=["score >= 0.9"],
                        key_metric="score:minimize", gate_timeout=60)
    inp = study_input(str(first), opts, settings)
    # a plan.json is named after its folder; other plan files after themselves
    start = tmp_path.name
    assert [p.plan_name for p in inp.plans] == [start, "cycle-2", "cycle-3", "cycle-10"]
    assert inp.state.first_plan == f"{start}@{inp.plans[0].plan_sha256}"
    assert inp.state.policy.max_cycles == 5 and inp.policy.gates.cycle.timeout_s == 60
    assert inp.state.policy.key_metric is not None
    assert inp.state.policy.key_metric.direction == "minimize"
    assert inp.state.policy.acceptance[0].describe() == "score >= 0.9"
    # the same start names the same study; other plans another
    assert start_key(inp) == start_key(study_input(str(first), opts, settings))
    fewer = StudyOptions(by="ada", cycles=5)
    assert start_key(inp)[1] != start_key(study_input(str(first), fewer, settings))[1]
    # plan files and folders together run in the order given
    extra = plan_file(tmp_path / "extra.json", "fit9", 0.9, "H2", H2)
    both = StudyOptions(by="ada", plans=[extra, tmp_path / "more"], cycles=5)
    assert [p.plan_name for p in study_input(str(first), both, settings).plans] == [
        start, "extra", "cycle-2", "cycle-3", "cycle-10"]


# --- a real study from the command line ------------------------------------------------------

@pytest.fixture
async def study_env(dev_env: WorkflowEnvironment, task_queue: str,
                    tmp_path: Path) -> AsyncIterator[dict[str, str]]:
    """A worker serving every queue; the environment a CLI process needs to reach it."""
    writer = ReportWriter(tmp_path / "runs", LocalArtifactStore(tmp_path / "store"))
    harness = Harness(dev_env, task_queue, tmp_path, overrides={
        "write_report": writer.write_report, "write_task_report": writer.write_task_report,
        "write_study_report": StudyReportWriter(tmp_path / "assay").write_study_report},
        extra=[close_cycle, resolve_reuse])
    queues = {f"ASSAY_QUEUE_{p.name}": task_queue for p in Pool}
    async with harness.worker():
        yield worker_env(dev_env.client.service_client.config.target_host,
                         "postgresql://unused", tmp_path / "assay", ASSAY_USER="ada",
                         ASSAY_SKILLS_ENABLED="false", ASSAY_MEMORY_ENABLED="false", **queues)


async def started_id(proc: asyncio.subprocess.Process) -> str:
    """The study ID an ``assay study --wait`` process says it started."""
    assert proc.stderr is not None
    while line := (await asyncio.wait_for(proc.stderr.readline(), timeout=60)).decode():
        if line.startswith("started "):
            return line.split()[1]
    raise AssertionError("the study did not start")


@pytest.mark.timeout(300)
async def test_a_study_driven_from_the_command_line(
        dev_env: WorkflowEnvironment, study_env: dict[str, str], tmp_path: Path,
        task_queue: str) -> None:
    first = plan_file(tmp_path / "plan.json", "fit1", 0.5, "H1", H1, H2)
    plan_file(tmp_path / "more" / "cycle-2.json", "fit2", 0.95, "H2", H2)
    args = ["study", str(first), "--plans", str(tmp_path / "more"), "--cycles", "4",
            "--human-gate", "cycle", "--approver", "ada", "--key-metric", "score"]
    follower = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "workers.cli", *args, "--wait", env=study_env, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    study = await started_id(follower)
    studies = StudyClient(dev_env.client, task_queue=task_queue)

    async def waits(what: str, holds: Callable[[StudyProgress], bool]) -> StudyProgress:
        seen: list[StudyProgress] = []

        async def check() -> bool:
            seen.append(await studies.progress(study))
            return holds(seen[-1])
        await wait_for(check, timeout=90, what=what)
        return seen[-1]

    try:
        code, _, err = await cli(study_env, *args)
        assert code == 1 and f"a study of this goal or plan already exists: {study} " \
                              "(running); pass --again" in err
        code, out, err = await cli(study_env, *args, "--again", "--json")
        assert code == 0 and json.loads(out) == {"study_id": f"{study}-r2"}, err
        await studies.handle(f"{study}-r2").terminate("one study is enough")
        await waits("the first cycle gate", lambda p: p.waiting is not None)
        code, out, err = await cli(study_env, "study", "status", study)
        assert code == 0, err
        assert f"study {study}: running (phase waiting), cycle 1 of at most 4" in out
        assert "waiting at the cycle gate since" in out and "cycle 1: pivot" in out
        assert (f"decided by ada: assay approve {study} --gate cycle --by ada "
                "[--choose iterate|fix|stop|pivot:H] [--reject]") in out
        row = next(line for line in out.splitlines() if line.startswith("1 "))
        assert cycle_run_id(study, 1) in row and "completed" in row
        assert "score = 0.5 (task fit1)" in row and "pivot (rules)" in row
        code, out, err = await cli(study_env, "gates")
        assert code == 0 and f"{study}  waiting at the cycle gate since" in out, err
        assert f"decided by ada: assay approve {study} --gate cycle --by ada" in out
        code, out, err = await cli(study_env, "hypotheses", study, "--json")
        assert code == 0, err
        tree = {h["id"]: h for h in json.loads(out)["hypotheses"]}
        assert (tree["H1"]["status"], tree["H1"]["decided_in"]) == ("refuted", 1)
        assert [(e["task_id"], e["value"]) for e in tree["H1"]["evidence"]] == [("fit1", 0.5)]
        code, out, _ = await cli(study_env, "hypotheses", study)
        assert "H1  -       refuted in cycle 1  score > 0.8  score=0.5 (fit1, cycle 1)" in out
        code, out, _ = await cli(study_env, "study", "report", study)
        assert code == 0 and f"study {study} is still running" in out
        code, _, err = await cli(study_env, "approve", study, "--gate", "cycle",
                                 "--choose", "pivot:H9")
        assert code == 1 and "refused: " in err and "no hypothesis 'H9'" in err
        code, _, err = await cli(study_env, "approve", study, "--gate", "cycle",
                                 "--choose", "pivot:H1")
        assert code == 1 and "already refuted" in err
        code, out, err = await cli(study_env, "approve", study, "--gate", "cycle",
                                   "--choose", "pivot:H2")
        assert code == 0 and out.startswith("cycle gate approved by ada via cli, "), err
        assert out.strip().endswith(" UTC: pivot:H2 chosen")

        await waits("the second cycle gate", lambda p: p.waiting is not None and
                    p.state.cycles == 2)
        code, out, err = await cli(study_env, "approve", study, "--gate", "cycle")
        assert code == 0 and out.startswith("cycle gate approved by ada via cli, "), err
        await waits("the study to ask for its third plan", lambda p: p.needs_plan)
        code, out, _ = await cli(study_env, "study", "status", study)
        assert f"waiting for the plan of cycle 3: assay plan {study} PLAN.json" in out
        code, out, _ = await cli(study_env, "gates")
        assert f"{study}  waiting for the plan of cycle 3: assay plan {study}" in out

        async def listed() -> bool:
            return [c.run_id for c in await studies.cycles(study)] == [
                cycle_run_id(study, 1), cycle_run_id(study, 2)]
        await wait_for(listed, timeout=30, what="the cycles listed by AssayParent")

        code, out, err = await cli(study_env, "stop", study, "-m", "enough")
        assert code == 0 and f"study {study} will stop after the cycle that runs (by ada)" \
            in out, err
        out_b, err_b = await asyncio.wait_for(follower.communicate(), timeout=90)
        followed, shown = out_b.decode(), err_b.decode()
        assert follower.returncode == 0, shown
        assert (f"cycle 1 ({cycle_run_id(study, 1)}): completed, score = 0.5 (task fit1); "
                "pivot (ada via cli, ") in shown and " UTC): ada chose pivot:H2" in shown
        assert (f"cycle 2 ({cycle_run_id(study, 2)}): completed, score = 0.95 (task fit2); "
                "iterate") in shown
        assert f"waiting for the plan of cycle 3: assay plan {study}" in shown
        assert f"study {study}: completed after 2 cycles: stopped by ada (enough)" in followed
        code, out, err = await cli(study_env, "study", "report", study)
        assert code == 0 and out.startswith("# Study: ") and "— completed" in out, err
        assert "stopped by ada (enough)" in out and "| 2 | " in out
        code, out, _ = await cli(study_env, "study", "status", study)
        assert f"study {study}: completed (phase done), cycle 2 of at most 4" in out
        code, _, err = await cli(study_env, "plan", study, str(first))
        assert code == 2 and f"refused: study {study} has finished (completed); it takes " \
                              "no plan now" in err
        code, _, err = await cli(study_env, "stop", study)
        assert code == 1 and "it takes no stop now" in err
        cycle = cycle_run_id(study, 1)
        code, _, err = await cli(study_env, "study", "status", cycle)
        assert code == 1 and f"{cycle!r} is not a study but a ResearchWorkflow" in err
        code, _, err = await cli(study_env, "hypotheses", "assay-study-nope-0000000000")
        assert code == 1 and "no study 'assay-study-nope-0000000000'" in err
    finally:
        if follower.returncode is None:
            follower.kill()
            await follower.wait()
        if await studies.status(study) == "running":
            await studies.handle(study).terminate("test over")


def test_a_hypothesis_row_gives_its_evidence_with_its_interval() -> None:
    from workers.cli.studies import hypothesis_row
    from workflows.contracts.hypotheses import Hypothesis

    item = Hypothesis.model_validate({
        "id": "H1", "statement": "ridge beats least squares", "status": "inconclusive",
        "test": {"metric": "r2_gain", "op": ">=", "threshold": 0.01},
        "evidence": [{"task_id": "compare", "metric": "r2_gain", "value": 0.01145, "cycle": 1,
                      "ci": [-0.0087, 0.0316], "level": 0.95},
                     {"task_id": "fit", "metric": "r2_gain", "value": 0.5, "cycle": 2}]})
    assert hypothesis_row(item)[4] == ("r2_gain=0.01145 [-0.0087, 0.0316] 95 % (compare, cycle 1), "
                                       "r2_gain=0.5 (fit, cycle 2)")


def test_status_shows_the_key_value_with_its_interval_and_task() -> None:
    policy = StudyPolicy(key_metric=Metric(name="r2"))
    tie = summary(2, key_value=0.4905, key_ci=(0.42, 0.55)).model_copy(
        update={"key_task": "ridge"})
    assert key_text(tie, policy) == "r2 = 0.4905 [0.42, 0.55] (task ridge)"
    assert key_text(summary(1, key_value=0.4897), policy) == "r2 = 0.4897"


def test_status_counts_what_the_running_cycle_spent_and_planned() -> None:
    from workers.cli.studies import status_lines
    from workflows.contracts.results import RunProgress
    from workflows.contracts.study import StudyPolicy, StudyState

    state = StudyState(study_id="s", goal="g", policy=StudyPolicy(budget_usd=5.0))
    progress = StudyProgress(study_id="s", phase="cycle", cycle=1, run_id="s.cycle-1",
                             state=state)
    running = RunProgress(run_id="s.cycle-1", phase="execute", status="running",
                          spent_usd=0.4213, hypotheses=["H1", "H2"])
    lines = status_lines(progress, "running", [], running)
    assert ("  spent $0.42 of $5.00 ($0.42 of it by cycle 1 so far); 2 hypotheses, 2 of "
            "them planned in cycle 1 (assay hypotheses s)") in lines
    assert "  spent $0.00 of $5.00; 0 hypotheses (assay hypotheses s)" in status_lines(
        progress, "running", [])
