"""A run naming no job environment gets the operator's default (science unless set otherwise).

Each run is read as ``assay run`` and ``assay study`` read it (``build_request``), with the
settings of the environment: the suite's fixtures set ``ASSAY_JOB_ENVIRONMENT=base``, so each
test here says which default it means.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workers.cli.run import build_request
from workers.intake.runpolicy import PolicyError, build_policy
from workers.settings import Settings
from workflows.contracts.policy import RunPolicy
from workflows.contracts.results import ResearchInput

STEP = {"priority": "HIGH", "action": "fit", "acceptance_criteria": ["works"]}


def plan_file(folder: Path, **top: str) -> Path:
    """A plan of two jobs: ``a`` names no environment, ``b`` names ``own``."""
    path = folder / "pending_actions.json"
    path.write_text(json.dumps({**top, "decisions": [
        {"task_id": "a", **STEP, "job": {"code": "import pandas, scipy, matplotlib\n"}},
        {"task_id": "b", **STEP, "job": {"code": "print(2)\n", "environment": "own"}}]}))
    return path


def read(target: Path | str, tmp_path: Path, policy: RunPolicy | None = None,
         data: list[Path] | None = None) -> ResearchInput:
    settings = Settings.model_validate({"data_dir": tmp_path / "assay"})
    return build_request(str(target), data or [], settings, policy or RunPolicy())


def jobs(req: ResearchInput) -> dict[str, str | None]:
    assert req.plan is not None
    return {d.task_id: d.job.environment for d in req.plan.decisions if d.job is not None}


def test_the_default_is_science(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_JOB_ENVIRONMENT")
    assert Settings().job_environment == "science"


@pytest.mark.parametrize("default", ["science", "tiny"])
def test_a_plan_naming_none_runs_in_the_default(tmp_path: Path, default: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tiny.txt").write_text("alpha\n")
    monkeypatch.setenv("ASSAY_ENVIRONMENTS_DIR", str(tmp_path))
    monkeypatch.setenv("ASSAY_JOB_ENVIRONMENT", default)
    req = read(plan_file(tmp_path), tmp_path)
    assert req.policy.environment == default  # the workflow gives it to every job naming none
    assert jobs(req) == {"a": None, "b": "own"}  # the plan, and so the run's ID, unchanged


def test_a_goal_runs_in_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_JOB_ENVIRONMENT", "science")
    table = tmp_path / "t.csv"
    table.write_text("x,y\n1,2\n")
    assert read("Is y larger than x?", tmp_path, data=[table]).policy.environment == "science"


def test_what_a_run_or_plan_names_comes_before_the_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_JOB_ENVIRONMENT", "science")
    named = read(plan_file(tmp_path, environment="own"), tmp_path)
    assert named.policy.environment == "own" and jobs(named) == {"a": "own", "b": "own"}
    settings = Settings.model_validate({"data_dir": tmp_path / "assay"})
    policy = build_policy(settings, environment="tiny", known_environments=["tiny"])
    assert read(plan_file(tmp_path), tmp_path, policy).policy.environment == "tiny"


def test_base_is_had_only_by_asking_for_it(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_JOB_ENVIRONMENT", "science")
    settings = Settings.model_validate({"data_dir": tmp_path / "assay"})
    policy = build_policy(settings, environment="base", known_environments=["science"])
    asked = read(plan_file(tmp_path), tmp_path, policy)
    assert asked.policy.environment is None and jobs(asked) == {"a": "base", "b": "own"}
    monkeypatch.setenv("ASSAY_JOB_ENVIRONMENT", "base")  # the operator's choice
    chosen = read(plan_file(tmp_path), tmp_path)
    assert chosen.policy.environment is None and jobs(chosen) == {"a": None, "b": "own"}


def test_an_unknown_default_is_refused_naming_the_setting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_JOB_ENVIRONMENT", "nope")
    with pytest.raises(PolicyError, match=r"ASSAY_JOB_ENVIRONMENT=nope: there is no "
                                          r"environment named so; known: science"):
        read(plan_file(tmp_path), tmp_path)
