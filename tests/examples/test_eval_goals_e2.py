"""The hand-recorded medium and hard evaluation goals (``examples/eval/goals/e2-*``).

Each goal's labels are recomputed by its ``reference.py`` in the science environment's
interpreter (numpy alone, never Assay) and must equal its ``task.json``. The goals then run
through ``assay eval``'s runner offline: every model answer comes from the goal's recording
(written by hand through a local Messages API endpoint), jobs run in the science environment
the recordings were made with (pinned in ``examples/hand-debug/environments``), and each run
scores as recorded: the Engel elasticity, the wine cultivars' Welch ANOVA and the CO2 trend
pass; the Grunfeld goal fails its reference because its plan added year effects to the firm
effects the goal asks for.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.support.e2e import PINNED_ENVIRONMENTS, ROOT, isolated_settings, pools_serving
from workers.evaluation.configurations import Configuration
from workers.evaluation.includes import rebased
from workers.evaluation.runner import Evaluation
from workers.evaluation.suite import Suite
from workers.settings import Settings

EVAL = ROOT / "examples" / "eval"
GOALS = ("e2-engel-elasticity", "e2-wine-anova", "e2-grunfeld-within", "e2-co2-trend")


def task_entry(goal: str) -> dict[str, Any]:
    """A goal's suite task, as the shipped suite includes it."""
    entry: dict[str, Any] = json.loads((EVAL / "goals" / goal / "task.json").read_text(
        encoding="utf-8"))
    return entry


def science_settings(data_dir: Path, prefix: str, environments: Path) -> Settings:
    """Settings whose jobs run in the pinned science environment the goals were recorded in."""
    return isolated_settings(data_dir, prefix).model_copy(update={
        "environments_root": environments, "environments_dir": PINNED_ENVIRONMENTS,
        "job_environment": "science"})


@pytest.fixture(scope="module")
async def science_python(shared_environments: Path, tmp_path_factory: pytest.TempPathFactory,
                         ) -> Path:
    """The pinned science environment's interpreter, provisioned once for the module."""
    settings = science_settings(tmp_path_factory.mktemp("assay"), "e2-ref", shared_environments)
    prepared = await settings.environments().prepare("science", [])
    return shared_environments / prepared.digest / "bin" / "python"


@pytest.mark.integration
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("goal", GOALS)
def test_each_e2_goal_reference_recomputes_the_labels_of_its_task(
        goal: str, science_python: Path) -> None:
    folder = EVAL / "goals" / goal
    entry = task_entry(goal)
    done = subprocess.run([str(science_python), str(folder / "reference.py")],
                          capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(done.stdout) == entry["labels"]
    assert entry["id"] == goal and entry["level"] in (2, 3)
    assert entry["data"] == ["table.csv"]  # relative to its file, as the suite includes it
    assert entry["replay"] == "recording.jsonl"
    assert (folder / "goal.txt").read_text(encoding="utf-8").strip() == entry["goal"]


@pytest.fixture
async def served(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                 task_queue: str, shared_environments: Path) -> AsyncIterator[Settings]:
    settings = science_settings(tmp_path / "assay", task_queue, shared_environments)
    async with pools_serving(settings, fresh_database_url, dev_env.client):
        yield settings


@pytest.mark.integration
@pytest.mark.timeout(1500)
async def test_the_e2_goals_replay_offline_through_eval_and_score_as_recorded(
        dev_env: WorkflowEnvironment, served: Settings) -> None:
    suite = Suite.model_validate({"name": "e2", "tasks": [
        rebased(task_entry(g), EVAL / "goals" / g, EVAL) for g in GOALS]})
    evaluation = Evaluation(suite, EVAL, settings=served, live=False, parallel=4,
                            timeout_s=1200)
    client = AssayClient(dev_env.client, task_queue=served.queue_orchestration)
    samples = {s.task: s for s in await evaluation.run_configuration(
        client, Configuration("full"), 1)}

    for sample in samples.values():  # every answer came from the recordings
        assert (sample.status, sample.error, sample.calls) == ("completed", "", 7), sample
        assert sample.calls_by_role["output_processor"] == 1
    engel, co2 = samples["e2-engel-elasticity"], samples["e2-co2-trend"]
    wine = samples["e2-wine-anova"]
    assert (wine.passed, sorted(wine.held)) == (True, [
        "@f_statistic[549.07] (want 549.07)", "@top_cultivar[class_0] (want class_0)"])
    assert (engel.passed, sorted(engel.held)) == (True, [
        "@elasticity[0.856] (want 0.856)", "@r_squared[0.884] (want 0.884)"])
    assert (co2.passed, sorted(co2.held)) == (True, [
        "@mean_1999[368.23] (want 368.23)", "@trend[1.348] (want 1.348)"])
    grunfeld = samples["e2-grunfeld-within"]  # two-way fixed effects: not the goal's within
    assert (grunfeld.passed, grunfeld.cause) == (False, "verification")
    assert sorted(grunfeld.missed) == ["@capital[0.351] (want 0.310)",
                                       "@value[0.117] (want 0.110)"]
