"""Following a run from the CLI: live progress with a job's heartbeat, exit codes by outcome,
readable ``watch`` lines with refusals shown when made, and gate hints that name who decides.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from tests.support.e2e import EXAMPLE, ROOT
from tests.support.waiting import wait_for
from tests.workers.cli.test_cli import cli

CHATTY = (
    "import json, pathlib, time\n"
    "for i in range(40):\n"
    "    print(f'\\x1b[31mepoch {i}\\x1b[0m loss {1 / (i + 1):.3f}', flush=True)\n"
    "    time.sleep(0.25)\n"
    "pathlib.Path('result.txt').write_text('done')\n"
    "json.dump({'epochs': 40}, open('metrics.json', 'w'))\n"
)


def chatty_plan(folder: Path) -> Path:
    """A one-task plan whose job prints a line (with terminal escapes) every 0.25 s for 10 s."""
    plan: dict[str, Any] = {"meeting_id": f"chatty-{folder.name}", "decisions": [{
        "task_id": "train", "priority": "HIGH", "action": "train for a while",
        "acceptance_criteria": ["result.txt written"],
        "job": {"code": CHATTY, "expected_artifacts": ["result.txt"],
                "expected_metrics": ["epochs"], "resources": {"timeout_s": 120}},
    }]}
    path = folder / "pending_actions.json"
    path.write_text(json.dumps(plan))
    return path


async def test_wait_and_status_show_counts_phases_and_the_jobs_heartbeat(
        served: dict[str, str], tmp_path: Path) -> None:
    plan = chatty_plan(tmp_path)
    policy = tmp_path / "policy.json"  # the server keeps a heartbeat every 0.8 x this timeout
    policy.write_text(json.dumps({"heartbeat_timeout_s": 3}))
    waiting = asyncio.create_task(cli(served, "run", str(plan), "--wait", "--again",
                                      "--policy", str(policy)))
    run_id = ""

    async def beating() -> bool:
        nonlocal run_id
        code, out, _ = await cli(served, "runs")
        mine = [line.split()[0] for line in out.splitlines() if "chatty" in line]
        if code != 0 or not mine:
            return False
        run_id = mine[0]
        code, out, _ = await cli(served, "status", run_id)
        return code == 0 and "execute_job" in out and "last output" in out

    await wait_for(beating, timeout=60, what="the job's heartbeat in `assay status`", every=0.5)
    _, out, _ = await cli(served, "status", run_id)
    line = next(line for line in out.splitlines() if "task train" in line)
    assert "running  execute  execute_job" in line and " out; last output " in line, line
    assert " s ago: epoch " in line or " min " in line, line  # how old the line shown is
    times = out.splitlines()[1]  # start, elapsed and the tally, as --wait's headline says them
    assert times.startswith("  started 20") and " UTC; now " in times, times
    assert "tasks 0/1 done  running: train execute" in times, times
    assert "\x1b" not in out  # a job's escapes never reach the terminal
    code, out, err = await waiting
    assert code == 0, err
    assert out.startswith(f"run {run_id}: completed")
    stamped = [line for line in err.splitlines() if line[:2].isdigit() and line[2] == ":"]
    assert any(line.endswith("task train: running (execute)") for line in stamped)
    assert any(line.endswith("task train: completed") for line in stamped)
    assert any(line.endswith("tasks 1/1 done") for line in stamped)
    assert stamped[-1].endswith("run: done (completed)")  # after its tasks' last lines
    beats = [line for line in stamped if "task train: execute_job" in line]
    assert beats and all("; last output" in line for line in beats)  # the first one too
    assert all("  +" in line for line in stamped)  # elapsed time on every line
    assert "\x1b" not in err


async def test_wait_exits_by_outcome_and_json_still_prints(served: dict[str, str]) -> None:
    code, out, err = await cli(served, "run", "Does sepal length differ between species?",
                               "--wait", "--json", "--again")
    assert code == 7, err  # deferred
    assert json.loads(out)["status"] == "deferred"
    assert "unless a skill in the library matches the goal" in err


async def test_gates_and_status_name_who_decides_and_list_runs_waiting_for_a_plan(
        served: dict[str, str]) -> None:
    code, out, err = await cli(served, "run", str(EXAMPLE), "--again", "--human-gate", "plan",
                               "--approver", "ada")
    assert code == 0, err
    gated = out.strip()
    code, out, err = await cli(served, "run", "How do iris petals differ?", "--again",
                               "--no-model", "wait")
    assert code == 0, err
    planless = out.strip()

    async def listed() -> bool:
        code, out, _ = await cli(served, "gates")
        return code == 0 and f"{gated} --gate plan" in out and planless in out

    await wait_for(listed, timeout=30, what="both runs in `assay gates`", every=0.5)
    _, out, _ = await cli(served, "gates")
    assert f"decided by ada: assay approve {gated} --gate plan --by ada" in out
    assert f"{planless}  waiting for a plan: assay plan {planless} PLAN.json" in out
    _, out, _ = await cli(served, "status", gated)
    assert f"decided by ada: assay approve {gated} --gate plan --by ada" in out
    code, out, _ = await cli(served, "runs")
    header = out.splitlines()[0].split()
    assert code == 0 and header == ["RUN", "STATUS", "TASKS", "STARTED", "DURATION", "GOAL"]
    row = next(line.split() for line in out.splitlines() if line.startswith(gated))
    assert row[1:4] == ["waiting", "0/4", "done"]
    for run_id in (gated, planless):
        await served_client_cancel(served, run_id)


async def served_client_cancel(env: dict[str, str], run_id: str) -> None:
    from client.assay import connect

    client = await connect(env["ASSAY_TEMPORAL_ADDRESS"])
    await client.get_workflow_handle(run_id).terminate("test over")


async def test_watch_prints_readable_lines_and_a_refusal_when_it_is_made(
        served: dict[str, str]) -> None:
    code, out, err = await cli(served, "run", str(EXAMPLE), "--again", "--human-gate", "plan",
                               "--approver", "ada")
    assert code == 0, err
    run_id = out.strip()
    watcher = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "workers.cli", "watch", run_id, env=served, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert watcher.stdout is not None
    seen: list[str] = []

    async def until(text: str) -> None:
        assert watcher.stdout is not None
        while not any(text in line for line in seen):
            seen.append((await watcher.stdout.readline()).decode())
            assert seen[-1], f"watch ended before {text!r}: {seen}"

    await asyncio.wait_for(until("the plan gate waits for a decision by ada"), timeout=60)
    code, _, err = await cli(served, "approve", run_id, "--gate", "plan", "--by", "eve")
    assert code == 1 and "'eve' may not decide" in err
    await asyncio.wait_for(until("a decision by eve was refused: 'eve' may not decide"),
                           timeout=30)
    _, status, _ = await cli(served, "status", run_id)
    assert "waiting at the plan gate" in status  # shown before the run took another step
    code, _, err = await cli(served, "approve", run_id, "--gate", "plan", "--by", "ada")
    assert code == 0, err
    rest, _ = await asyncio.wait_for(watcher.communicate(), timeout=120)
    lines = "".join(seen).splitlines() + rest.decode().splitlines()
    assert watcher.returncode == 0
    assert sum("refused" in line for line in lines) == 1, lines  # once, not again as an event
    assert any("the plan gate was approved by ada" in line for line in lines)
    assert any("task 4" in line and "job succeeded in" in line for line in lines)
    assert any(line.split()[1:] [:1] == ["run"] and "ended completed" in line for line in lines)
    assert not any("approval/" in line or "code_exec" in line for line in lines)
    code, out, _ = await cli(served, "watch", run_id, "--no-follow", "--json")
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [e["seq"] for e in events] == sorted(e["seq"] for e in events)
    assert {"seq", "recorded_at", "event", "text"} <= events[0].keys()


async def test_watch_and_status_of_an_unknown_run_are_clear_errors(
        served: dict[str, str]) -> None:
    for args in (["watch", "assay-run-nope-0000000000"], ["status", "x" * 5000],
                 ["watch", "\x1b[2J", "--json"]):
        code, _, err = await cli(served, *args)
        assert code == 1 and "no run" in err, err
