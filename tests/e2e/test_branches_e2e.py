"""Branches end to end on the dev server: a worker process, the real sandbox, both CLIs.

A run held open gets a three-value sweep from a task's ``execute`` checkpoint with ``assay
branch``; the worker is killed while the branches' jobs run and started again; the comparator
ranks the lines and a person keeps another one than its first with ``temporal workflow
signal``; the run is closed with ``temporal workflow update``. The events prove the upstream
task ran once and that no job ran to completion twice; the report follows the person's choice.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.support.e2e import (
    ROOT,
    isolated_settings,
    kill_hard,
    queue_env,
    report_of,
    start_worker,
    stop_gently,
    stored_events,
    temporal_cli,
    worker_env,
)
from tests.support.waiting import wait_for
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import queues_from
from workflows.contracts.branches import BranchTree
from workflows.contracts.policy import RunPolicy

pytestmark = pytest.mark.integration

DATA = ("import json, pathlib\n"
        "pathlib.Path('data.txt').write_text(' '.join(str(i) for i in range(100)))\n"
        "json.dump({'rows': 100}, open('metrics.json', 'w'))\n")
FIT = ("import argparse, json, pathlib, time\n"
       "p = argparse.ArgumentParser()\n"
       "p.add_argument('--score', type=float)\n"
       "p.add_argument('--delay', type=float)\n"
       "a = p.parse_args()\n"
       "rows = len(pathlib.Path('deps/data/data.txt').read_text().split())\n"
       "pathlib.Path('started.txt').write_text('started')\n"
       "time.sleep(a.delay)\n"
       "pathlib.Path('fit.txt').write_text(str(a.score))\n"
       "json.dump({'score': a.score, 'rows': rows}, open('metrics.json', 'w'))\n")


def plan(folder: Path) -> Path:
    """``data`` then ``fit`` (whose score is its argument, after ``delay`` seconds of work)."""
    decisions: list[dict[str, Any]] = [
        {"task_id": "data", "priority": "HIGH", "action": "write the data",
         "acceptance_criteria": ["data.txt"],
         "job": {"code": DATA, "expected_artifacts": ["data.txt"],
                 "expected_metrics": ["rows"]},
         "checks": [{"metric": "rows", "op": "==", "value": 100}]},
        {"task_id": "fit", "priority": "HIGH", "action": "fit the data",
         "acceptance_criteria": ["fit.txt"], "dependencies": ["data"],
         "job": {"code": FIT, "args": {"score": 0.5, "delay": 0.1},
                 "expected_artifacts": ["fit.txt", "started.txt"],
                 "expected_metrics": ["score", "rows"], "resources": {"timeout_s": 120}},
         "checks": [{"metric": "rows", "op": "==", "value": 100}]},
    ]
    path = folder / "pending_actions.json"
    path.write_text(json.dumps({"meeting_id": f"branches-{folder.name}",
                                "metric": {"name": "score", "direction": "maximize"},
                                "decisions": decisions}))
    return path


def branch_jobs_started(data: Path) -> list[Path]:
    """Attempt directories in which a branch's ``fit`` job has started."""
    return sorted(p.parent for p in (data / "work").glob("*/fit.branch-*/*/started.txt"))


@pytest.mark.timeout(300)
async def test_a_sweep_survives_a_killed_worker_and_a_person_keeps_another_line(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str) -> None:
    data = tmp_path / "assay"
    settings = isolated_settings(data, task_queue)
    queues = queues_from(settings)
    address = dev_env.client.service_client.config.target_host
    env = worker_env(address, fresh_database_url, data, **queue_env(settings))
    log = tmp_path / "worker.log"
    policy = RunPolicy.model_validate({"heartbeat_timeout_s": 3,
                                       "branching": {"hold_open": True, "approvers": ["ada"]}})
    req = load_plan(plan(tmp_path), max_bytes=settings.max_plan_bytes, queues=queues,
                    policy=policy)
    client = AssayClient(dev_env.client, task_queue=queues.orchestration)
    workers = [start_worker(env, log)]
    try:
        run_id = await client.start_run(req, again=True)

        async def held_open() -> bool:
            return (await client.progress(run_id)).phase == "open"

        await wait_for(held_open, timeout=90, what="the run to be held open")
        branch = subprocess.run(
            [sys.executable, "-m", "workers.cli", "branch", run_id, "--from", "fit:execute",
             "--sweep", "args.score=0.2,0.9,0.6", "--set", "args.delay=4", "--select", "person",
             "--by", "ada"],
            env=env, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
        assert branch.returncode == 0, branch.stdout + branch.stderr
        await wait_for(lambda: bool(branch_jobs_started(data)), timeout=60,
                       what="a branch's job to start")
        kill_hard(workers[0])
        workers.append(start_worker(env, log))

        async def branch_gate() -> bool:
            waiting = (await client.progress(run_id)).waiting
            return waiting is not None and waiting.gate == "branch"

        await wait_for(branch_gate, timeout=120, what="the branch gate")
        tree = await client.handle(run_id).query("branches", result_type=BranchTree)
        by_score = {b.name: b for b in tree.branches}
        assert len(by_score) == 3, tree
        best = min(by_score.values(), key=lambda b: b.score.rank if b.score else 99)
        assert best.name.endswith("0.9"), [(b.name, b.score) for b in tree.branches]
        other = next(name for name in by_score if name.endswith("0.6"))
        await temporal_cli(address, "workflow", "signal", "--workflow-id", run_id,
                           "--name", "approve", "--input", json.dumps(
                               {"gate": "branch", "decision": "approve", "choice": other,
                                "by": "ada"}))

        async def settled() -> bool:
            return (await client.progress(run_id)).waiting is None

        await wait_for(settled, timeout=60, what="the branch gate to settle")
        await temporal_cli(address, "workflow", "update", "execute", "--workflow-id", run_id,
                           "--name", "steer_run", "--input",
                           json.dumps({"action": "close", "by": "ada"}))
        result = await asyncio.wait_for(client.result(run_id), timeout=60)
    finally:
        for worker in workers:
            stop_gently(worker)
    report = report_of(result)
    assert report.status == "completed", [(t.task_id, t.status_reason) for t in report.tasks]
    fit = {t.task_id: t for t in report.tasks}["fit"]
    assert fit.branch == other and fit.metrics["score"] == 0.6, fit
    assert report.branches is not None
    assert [b.name for b in report.branches.branches if b.selected] == [other]
    assert list(report.branches.kept.values()) == [other]
    assert all(b.reused == ["data"] for b in report.branches.branches)
    assert result.report is not None
    markdown = Path(result.report.summary_md).read_text()
    assert other in markdown and "a person's choice" in fit.status_reason

    events = await stored_events(fresh_database_url, run_id)
    orders = Counter((e.event.node_id, e.event.execution_order) for e in events)
    assert max(orders.values()) == 1, "an event was written twice"
    jobs = Counter((e.event.node_id, e.event.event_subtype) for e in events
                   if e.event.event_type == "code_exec")
    scopes = {node for node, _ in jobs}
    assert scopes == {"data", "fit", *(f"fit.branch-{name}" for name in by_score)}, jobs
    # upstream ran once, in the main line; every job, the interrupted one too, completed once
    assert all(jobs[(scope, "complete")] == 1 for scope in scopes), jobs
    assert jobs[("data", "start")] == 1
    assert len(branch_jobs_started(data)) == 3
