"""Workflow-ID formats: the same plan always gets the same run ID (pure; no server)."""

from __future__ import annotations

import pytest

from workflows.constants import (
    RUN_ID_PREFIX,
    cycle_run_id,
    digest,
    in_study,
    run_workflow_id,
    task_workflow_id,
)

PLAN_DIGEST = digest(b'{"decisions": []}')


@pytest.mark.parametrize(("name", "expected"), [
    ("iris", "assay-run-iris-"),
    ("Iris: petal/sepal (v2)", "assay-run-iris-petal-sepal-v2-"),
    ("goal-does-sepal-length-differ-between", "assay-run-goal-does-sepal-length-differ-between-"),
    ("Compare sepal and petal measurements across species",
     "assay-run-compare-sepal-and-petal-measurements-acr-"),  # cut at 40, inside a word
    ("鸢尾花", "assay-run-plan-"),
])
def test_a_run_id_is_the_plan_name_as_a_slug_and_the_start_of_its_digest(
        name: str, expected: str) -> None:
    # Run IDs of plans already run must not change: a repeated start is refused by them.
    assert run_workflow_id(name, PLAN_DIGEST) == expected + PLAN_DIGEST[:10]


def test_a_deliberate_re_run_is_numbered_and_tasks_hang_off_their_run() -> None:
    run_id = run_workflow_id("iris", PLAN_DIGEST, attempt=3)
    assert run_id.startswith(f"{RUN_ID_PREFIX}-iris-") and run_id.endswith("-r3")
    assert task_workflow_id(run_id, "fit.1") == f"{run_id}.task-fit.1"


def test_the_digest_is_the_hex_sha256() -> None:
    assert digest(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_a_studys_cycles_and_their_branches_are_in_the_study_and_plain_runs_are_not() -> None:
    cycle = cycle_run_id("assay-study-fit-1a2b3c4d5e", 2)
    assert in_study(cycle) and in_study(f"{cycle}.b1")
    plain = run_workflow_id("iris-morphology-cycle1", "f" * 64)
    assert not in_study(plain) and not in_study(f"{plain}.b1")
