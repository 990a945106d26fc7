"""A real Prometheus scrapes a worker process while a plan runs, and answers PromQL about it.

Debian's ``prometheus`` server (installed by ``make system`` as root) scrapes the metrics
port of an ``assay worker`` process every half second; once the run ends, the task counter
and a phase-duration quantile are read back through Prometheus's HTTP API. The worker is a
process of its own, so its registry holds this run's figures alone.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.metrics.definitions import PHASE_BUCKETS_S
from activities.metrics.record import phase_durations
from client.assay import AssayClient
from tests.support.e2e import (
    isolated_settings,
    queue_env,
    report_of,
    start_worker,
    stop_gently,
    worker_env,
)
from tests.support.waiting import wait_for
from tests.workers.pools.test_pools import free_port
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import queues_from

pytestmark = pytest.mark.integration

SLEEPS_S = {"short": 0.2, "long": 1.5}
"""Two tasks whose jobs take different times, so their execute phases differ."""


def prometheus_binary(name: str = "prometheus") -> str:
    """A binary of Debian's ``prometheus`` package; skipped (with why) only where it cannot
    be installed: missing as root is a failure, since ``make system`` installs it."""
    found = shutil.which(name)
    if found is not None:
        return found
    if os.geteuid() == 0:
        pytest.fail(f"{name} is missing; `make system` installs Debian's prometheus as root")
    pytest.skip(f"{name} is missing and installing it needs root (apt-get install prometheus)")


@pytest.fixture
def metrics_port() -> int:
    return free_port()


@pytest.fixture
def prometheus(tmp_path: Path, metrics_port: int) -> Iterator[str]:
    """A Prometheus scraping ``metrics_port`` every half second; its base URL."""
    binary = prometheus_binary()
    config = tmp_path / "prometheus.yml"
    config.write_text(json.dumps({  # JSON is YAML
        "global": {"scrape_interval": "500ms", "scrape_timeout": "400ms"},
        "scrape_configs": [{"job_name": "assay-worker",
                            "static_configs": [{"targets": [f"127.0.0.1:{metrics_port}"]}]}],
    }))
    port = free_port()
    log = (tmp_path / "prometheus.log").open("wb")
    proc = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_gently(proc)
        log.close()


def query(base: str, promql: str) -> list[dict[str, Any]]:
    """An instant PromQL query's result vector (empty while Prometheus is not ready)."""
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            answer = json.load(resp)
    except OSError:
        return []
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


def scalar(base: str, promql: str) -> float | None:
    """The one value of a query, or None while it has none."""
    found = query(base, promql)
    return float(found[0]["value"][1]) if len(found) == 1 else None


def two_task_plan(folder: Path) -> Path:
    """A plan of two tasks whose jobs sleep for different times."""
    decisions = [{
        "task_id": name, "priority": "HIGH", "action": f"sleep {seconds} s",
        "acceptance_criteria": ["done.txt written"],
        "job": {"code": (f"import time, pathlib\ntime.sleep({seconds})\n"
                         "pathlib.Path('done.txt').write_text('done')\n"),
                "expected_artifacts": ["done.txt"]},
    } for name, seconds in SLEEPS_S.items()]
    path = folder / "pending_actions.json"
    path.write_text(json.dumps({"meeting_id": f"metrics-{folder.name}",
                                "decisions": decisions}))
    return path


def bucket_of(seconds: float) -> tuple[float, float]:
    """The histogram bucket ``(lower, upper]`` an observation falls in."""
    bounds = [0.0, *PHASE_BUCKETS_S, math.inf]
    return next((lo, hi) for lo, hi in itertools.pairwise(bounds) if seconds <= hi)


async def test_prometheus_reads_the_task_counter_and_a_phase_quantile_by_promql(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str, metrics_port: int, prometheus: str) -> None:
    data = tmp_path / "assay"
    settings = isolated_settings(data, task_queue)
    env = worker_env(dev_env.client.service_client.config.target_host, fresh_database_url,
                     data, ASSAY_METRICS_PORT=str(metrics_port), **queue_env(settings))
    worker = start_worker(env, tmp_path / "worker.log")
    try:
        await wait_for(lambda: scalar(prometheus, 'up{job="assay-worker"}') == 1.0,
                       timeout=60, what="Prometheus to scrape the worker")
        queues = queues_from(settings)
        client = AssayClient(dev_env.client, task_queue=queues.orchestration)
        req = load_plan(two_task_plan(tmp_path), max_bytes=settings.max_plan_bytes,
                        queues=queues)
        report = report_of(await client.result(await client.start_run(req, again=True)))
        assert report.status == "completed", [(t.task_id, t.status_reason)
                                              for t in report.tasks]

        tasks = 'sum(assay_tasks_total{status="completed"})'
        runs = 'sum(assay_runs_total{status="completed"})'
        await wait_for(lambda: (scalar(prometheus, tasks), scalar(prometheus, runs)) == (2, 1),
                       timeout=30, what="Prometheus to count two tasks and one run completed")
        quantile = scalar(prometheus, 'histogram_quantile(0.5, sum by (le) '
                                      '(assay_task_phase_seconds_bucket{phase="execute"}))')
        pollers = query(prometheus, 'temporal_num_pollers{job="assay-worker"}')
    finally:
        stop_gently(worker)

    executes = sorted(s for t in report.tasks for p, s in phase_durations(t) if p == "execute")
    assert len(executes) == 2 and executes[1] > SLEEPS_S["long"]
    # The median of two is the rank-1 observation: Prometheus interpolates inside its bucket.
    lower, upper = bucket_of(executes[0])
    assert quantile is not None and lower <= quantile <= upper, (quantile, executes)
    # The SDK's metrics come through the same scrape.
    assert {p["metric"]["task_queue"] for p in pollers} >= {queues.orchestration}
