"""The hand-recorded goals ``examples/eval/goals/e3-*``: one easy, one medium, two hard.

Each goal's labels are recomputed by its ``reference.py`` (numpy and scipy, never Assay) in
the science environment's interpreter and must equal its ``task.json``. Each goal then
replays offline through ``assay eval``'s runner under the full configuration, every model
answer from its recording (written by hand through a local Messages API endpoint), jobs in
the pinned science environment the recordings were made with, and scores as recorded:
the sunspot peak and the Chinese cities' stratified odds ratio pass; the students' logit passes
after a reviewer sent back a draft fitted with no intercept; the heart transplant survival
passes after its first job called a method statsmodels does not have and the debuggers fixed
it (each of their three fixes reviewed).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.support.e2e import (
    PINNED_ENVIRONMENTS,
    ROOT,
    check_references,
    isolated_settings,
    replay_goal,
)

pytestmark = pytest.mark.integration
GOALS = ROOT / "examples" / "eval" / "goals"
PLANNED: dict[str, tuple[int, dict[str, int]]] = {
    "e3-sunspots-peak": (1, {"coder": 1, "output_processor": 1}),
    "e3-spector-logit": (2, {"coder": 2, "reviewer_quality_safety": 2}),
    "e3-heart-survival": (3, {"coder": 1, "debugger_direct": 1, "debugger_introspect": 1,
                              "debugger_diagnostic": 2, "reviewer_ops": 4}),
    "e3-china-smoking": (3, {"coder": 1, "output_processor": 1}),
}
"""Each goal's level and some of its calls by role on its recording (the reviewer that sent
the logit back, the debuggers and the reviews of their fixes)."""


def test_every_e3_goal_folder_is_listed_with_its_level() -> None:
    found = sorted(p.parent.name for p in GOALS.glob("e3-*/task.json"))
    assert found == sorted(PLANNED)
    for goal, (level, _) in PLANNED.items():
        entry = json.loads((GOALS / goal / "task.json").read_text(encoding="utf-8"))
        assert (entry["id"], entry["level"], entry["data"]) == (goal, level, ["table.csv"])
        assert entry["replay"] == "recording.jsonl"
        assert (GOALS / goal / "goal.txt").read_text(encoding="utf-8").strip() == entry["goal"]


@pytest.mark.timeout(900)
async def test_each_e3_reference_recomputes_its_labels_in_the_science_interpreter(
        tmp_path: Path, shared_environments: Path) -> None:
    await check_references([GOALS / goal for goal in sorted(PLANNED)], tmp_path / "assay",
                           shared_environments)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("goal", sorted(PLANNED))
async def test_an_e3_goal_replays_offline_through_assay_eval_and_scores_as_recorded(
        goal: str, dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str, shared_environments: Path) -> None:
    folder = GOALS / goal
    settings = isolated_settings(tmp_path / "assay", task_queue,
                                 environments_root=shared_environments,
                                 environments_dir=PINNED_ENVIRONMENTS)
    task, sample = await replay_goal(folder, settings, fresh_database_url, dev_env.client)


    assert (sample.status, sample.passed, sample.missed) == ("completed", True, []), sample
    assert sorted(sample.held) == sorted(f"@{name}[{value}] (want {value})"
                                         for name, value in task.labels.items())
    assert sample.calls == len((folder / "recording.jsonl").read_text().splitlines())
    _, roles = PLANNED[goal]
    assert {r: sample.calls_by_role.get(r, 0) for r in roles} == roles
