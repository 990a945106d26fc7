"""Held-out metrics never choose a line or a study's progress unless ``--allow-test-selection``.

``assay run``, ``assay branch`` and ``assay study`` refuse at intake (exit 2, before connecting
to Temporal) a selection metric named ``test_...`` or listed in a plan's ``held_out``, naming the
metric and the flag; with the flag the input passes every check and goes on to connect. The
Python client refuses such a plan too, before it starts anything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient, HeldOutSelectionError, RunNotFoundError
from tests.workers.cli.test_goal_cli import nowhere, reaches_temporal, refused
from tests.workflows.harness import task
from workflows.constants import run_workflow_id
from workflows.contracts.plan import Plan
from workflows.contracts.policy import Queues, RunPolicy
from workflows.contracts.results import ResearchInput

__all__ = ["nowhere"]  # the fixture, imported for this module's tests

FLAG = "--allow-test-selection"


def plan_file(folder: Path, **extra: Any) -> Path:
    path = folder / "plan.json"
    decision = task("fit", score=0.5)
    for field in ("source", "filename"):  # Assay sets them when the plan is resolved
        del decision["job"][field]
    path.write_text(json.dumps({"decisions": [decision], **extra}))
    return path


def test_a_run_comparing_branches_on_a_test_metric_is_refused_without_the_flag(
        nowhere: Path) -> None:
    plan = plan_file(nowhere, metric={"name": "test_r2"})
    err = refused(["run", str(plan)], "metric 'test_r2', which is held out")
    assert FLAG in err
    reaches_temporal(["run", str(plan), FLAG])


def test_a_metric_the_plan_lists_as_held_out_is_refused_too(nowhere: Path) -> None:
    plan = plan_file(nowhere, metric={"name": "r2_holdout"}, held_out=["r2_holdout"])
    refused(["run", str(plan)], "metric 'r2_holdout', which is listed as held out by the plan")
    reaches_temporal(["run", str(plan), FLAG])
    reaches_temporal(["run", str(plan_file(nowhere, metric={"name": "cv_r2"},
                                           held_out=["r2_holdout"]))])


def test_branch_selection_by_a_test_metric_is_refused_without_the_flag(nowhere: Path) -> None:
    args = ["branch", "assay-x-0", "--from", "2", "--sweep", "args.alpha=0.1,1", "--metric",
            "test_r2:maximize"]
    err = refused(args, "branch selection would use metric 'test_r2'")
    assert FLAG in err
    reaches_temporal([*args, FLAG])


def test_a_studys_key_metric_may_not_be_held_out_without_the_flag(nowhere: Path) -> None:
    refused(["study", "start", "does ridge beat least squares?", "--key-metric", "test_r2"],
            "the study's key metric (--key-metric) would use metric 'test_r2'")
    plan = plan_file(nowhere, held_out=["r2_holdout"])
    refused(["study", "start", str(plan), "--key-metric", "r2_holdout"],
            "listed as held out by the plan")
    reaches_temporal(["study", "start", str(plan), "--key-metric", "r2_holdout", FLAG])
    reaches_temporal(["study", "start", str(plan), "--key-metric", "cv_r2"])


async def test_the_client_refuses_a_held_out_selection_before_starting(
        time_env: WorkflowEnvironment, task_queue: str) -> None:
    client = AssayClient(time_env.client, task_queue=task_queue)
    plan = Plan.model_validate({"decisions": [task("fit")], "metric": {"name": "test_auc"}})
    req = ResearchInput(run_id="", plan_name="p", plan_sha256="3" * 64, plan=plan,
                        queues=Queues(), policy=RunPolicy())
    with pytest.raises(HeldOutSelectionError, match="metric 'test_auc'"):
        await client.start_run(req)
    with pytest.raises(RunNotFoundError):  # nothing was started
        await client.status(run_workflow_id("p", "3" * 64))
