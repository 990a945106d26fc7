"""The hand-recorded easy and medium goals of the evaluation suite (``examples/eval/goals/e1-*``).

Each goal replays offline through ``assay eval``'s runner under the configuration the suite
runs it with (``full``), every model answer from its recording (written by hand through a
local Messages API endpoint, reading only each request; no model server exists here). Each
scores as planned: the wine, stack loss and Longley goals pass (Longley's after its first job
fails and a debugger fixes it); the Nile goal fails because its job took numpy's default
standard deviation (``ddof=0``). Each goal's labels are recomputed by its ``reference.py`` in
the science environment's interpreter (pinned by ``examples/hand-debug/environments``) and
must equal its ``task.json``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.support.e2e import ROOT, check_references, isolated_settings, replay_goal

pytestmark = pytest.mark.integration
SUITE_DIR = ROOT / "examples" / "eval"
GOALS = SUITE_DIR / "goals"
PLANNED: dict[str, list[str]] = {
    "e1-nile-flow": ["@sd_flow[168.38] (want 169.23)"],
    "e1-wine-alcohol": [],
    "e1-stackloss-fit": [],
    "e1-longley-trend": [],
}
"""Each goal's missed labels on its recording: none, or the planned wrong answer."""


def test_every_e1_goal_folder_is_listed_with_its_planned_score() -> None:
    found = sorted(p.parent.name for p in GOALS.glob("e1-*/task.json"))
    assert found == sorted(PLANNED)


@pytest.mark.timeout(900)
async def test_each_e1_reference_recomputes_its_labels_in_the_science_interpreter(
        tmp_path: Path, shared_environments: Path) -> None:
    await check_references([GOALS / goal for goal in sorted(PLANNED)], tmp_path / "assay",
                           shared_environments)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("goal", sorted(PLANNED))
async def test_an_e1_goal_replays_offline_through_assay_eval_and_scores_as_planned(
        goal: str, dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str, shared_environments: Path) -> None:
    folder = GOALS / goal
    settings = isolated_settings(tmp_path / "assay", task_queue,
                                 environments_root=shared_environments)
    task, sample = await replay_goal(folder, settings, fresh_database_url, dev_env.client)

    assert task.id == goal and task.replay == "recording.jsonl"  # relative to its file
    assert sample.status == "completed", (sample.error, sample.missed)
    assert sample.missed == PLANNED[goal]
    assert sample.passed == (not PLANNED[goal])
    assert sample.calls == len((folder / "recording.jsonl").read_text().splitlines())
