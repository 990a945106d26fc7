"""The science example end to end: jobs importing pandas, scipy and matplotlib complete in the
provisioned science environment (downloaded from the package index once per test session),
whether the plan names it or, naming none, gets it as the default."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.support.e2e import (
    ROOT,
    isolated_settings,
    pools_serving,
    report_of,
    store_of,
    stored_events,
)
from workers.cli.run import build_request
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import queues_from
from workers.settings import Settings
from workflows.contracts.policy import Queues, RunPolicy

pytestmark = pytest.mark.integration
SCIENCE = ROOT / "examples" / "science" / "plan.json"


@pytest.fixture
async def workers(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                  task_queue: str, shared_environments: Path,
                  ) -> AsyncIterator[tuple[Settings, Queues]]:
    """Every pool in this process; environments in the session's shared directory."""
    settings = isolated_settings(tmp_path / "assay", task_queue).model_copy(
        update={"environments_root": shared_environments})
    async with pools_serving(settings, fresh_database_url, dev_env.client):
        yield settings, queues_from(settings)


@pytest.mark.timeout(900)
async def test_the_science_example_completes_in_the_science_environment(
        dev_env: WorkflowEnvironment, fresh_database_url: str,
        workers: tuple[Settings, Queues]) -> None:
    settings, queues = workers
    client = AssayClient(dev_env.client, task_queue=queues.orchestration)
    req = load_plan(SCIENCE, max_bytes=settings.max_plan_bytes, queues=queues,
                    store=store_of(settings))
    run_id = await client.start_run(req, again=True)
    result = report_of(await client.result(run_id))

    assert result.status == "completed", [(t.task_id, t.status_reason) for t in result.tasks]
    tasks = {t.task_id: t for t in result.tasks}
    science = tasks["fit"].provenance.environment
    assert science is not None and science.name == "science" and len(science.digest) == 64
    again = tasks["plot"].provenance.environment
    assert again is not None and again.digest == science.digest and again.pins == science.pins
    # provisioned at most once: by this run's first task, or earlier in the session by
    # another test sharing the environments directory; the second task always reuses it
    assert again.reused
    assert {p.split("==")[0] for p in science.pins} >= {"numpy", "pandas", "scipy",
                                                        "matplotlib"}
    for task in result.tasks:
        assert task.execution is not None
        assert task.execution.environment == science.label()
    assert 1.8 < tasks["fit"].metrics["slope"] < 2.2
    assert tasks["plot"].metrics["points"] == 200
    png = next(a for a in tasks["plot"].artifacts if a.name == "scatter.png")
    assert Path(png.path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The run's report folder holds the figure and embeds it, and names the environment.
    assert result.report is not None
    summary = Path(result.report.summary_md).read_text()
    assert "  ![scatter.png](artifacts/plot/scatter.png)" in summary
    copied = Path(result.report.summary_md).parent / "artifacts" / "plot" / "scatter.png"
    assert copied.read_bytes() == Path(png.path).read_bytes()
    assert f"- Environment: `{science.label()}` (Python " in summary

    events = await stored_events(fresh_database_url, run_id)
    ready = [e.event.node_id for e in events if e.event.status == "environment_ready"
             and e.event.outputs.get("environment") == science.label()]
    ran = [e.event.node_id for e in events if e.event.event_type == "code_exec"
           and e.event.outputs.get("environment") == science.label()]
    assert sorted(ready) == sorted(ran) == ["fit", "plot"]
    provisioned = settings.environments().installed(science.digest)
    assert provisioned is not None and provisioned.parent == settings.provisioned_dir


NAMES_NOTHING = """import json

import matplotlib
import pandas as pd
from scipy import stats

matplotlib.use("Agg")
from matplotlib import pyplot as plt  # noqa: E402

table = pd.DataFrame({"x": [1, 2, 3, 4], "y": [3, 5, 7, 9]})
fit = stats.linregress(table["x"], table["y"])
figure, axes = plt.subplots()
axes.plot(table["x"], table["y"])
figure.savefig("line.png")
with open("metrics.json", "w") as out:
    json.dump({"slope": float(fit.slope)}, out)
"""


@pytest.mark.timeout(900)
async def test_a_job_naming_no_environment_runs_in_the_science_default(
        dev_env: WorkflowEnvironment, workers: tuple[Settings, Queues], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings, queues = workers
    monkeypatch.delenv("ASSAY_JOB_ENVIRONMENT")  # the shipped default, as a new user has it
    settings = settings.model_copy(update={"job_environment": Settings().job_environment})
    plan = tmp_path / "pending_actions.json"
    plan.write_text(json.dumps({"decisions": [{
        "task_id": "first", "priority": "HIGH", "action": "fit and plot a line",
        "acceptance_criteria": ["a slope of 2"],
        "job": {"code": NAMES_NOTHING, "expected_artifacts": ["line.png"],
                "expected_metrics": ["slope"], "resources": {"timeout_s": 300}},
        "checks": [{"metric": "slope", "op": ">", "value": 1.99}]}]}))
    req = build_request(str(plan), [], settings, RunPolicy())
    assert req.plan is not None and req.plan.decisions[0].job is not None
    assert req.plan.decisions[0].job.environment is None  # the plan names nothing
    client = AssayClient(dev_env.client, task_queue=queues.orchestration)
    result = report_of(await client.result(await client.start_run(req, again=True)))

    assert result.status == "completed", [(t.task_id, t.status_reason) for t in result.tasks]
    task = result.tasks[0]
    ran_in = task.provenance.environment
    assert ran_in is not None and ran_in.name == "science" and len(ran_in.digest) == 64
    assert task.execution is not None and task.execution.environment == ran_in.label()
    assert task.metrics["slope"] == pytest.approx(2.0)
