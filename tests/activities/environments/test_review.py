"""The infrastructure reviewer resolves a job's environment: what it installs, policy, imports."""

from __future__ import annotations

import sys
from pathlib import Path

from activities.environments import Environments
from activities.review.infra import InfrastructureReviewer
from workflows.contracts.plan import JobSpec, Resources
from workflows.contracts.policy import PackagePolicy, ReviewPolicy
from workflows.contracts.verdicts import ReviewInput, ReviewVerdict


def review_input(code: str, *, requirements: list[str] | None = None,
                 environment: str | None = None,
                 packages: PackagePolicy | None = None) -> ReviewInput:
    spec = JobSpec(code=code, requirements=requirements or [], environment=environment,
                   resources=Resources(memory_mb=64))
    return ReviewInput(task_id="t", action="a",
                       policy=ReviewPolicy(packages=packages or PackagePolicy()),
                       job=spec.model_copy(update={"source": code, "filename": "job.py"}))


def reviewer(environments: Environments, tmp_path: Path) -> InfrastructureReviewer:
    return InfrastructureReviewer(tmp_path / "work", sys.executable, environments=environments)


def codes(verdict: ReviewVerdict) -> list[str]:
    return [f.code for f in verdict.critical]


async def test_a_named_environment_reports_what_will_be_installed(
        environments: Environments, tmp_path: Path) -> None:
    verdict = await reviewer(environments, tmp_path).review_infrastructure(
        review_input("import alpha\nimport beta\n", environment="tiny"))
    assert verdict.verdict == "APPROVE", verdict.critical
    described = verdict.details["environment"]
    assert described["name"] == "tiny" and not described["provisioned"]
    assert described["to_install"] == {"alpha": "1.0", "beta": "2.0"}
    assert environments.installs == 0


async def test_an_import_no_package_of_the_environment_provides_is_rejected(
        environments: Environments, tmp_path: Path) -> None:
    verdict = await reviewer(environments, tmp_path).review_infrastructure(
        review_input("import alpha\nimport matplotlib\n", requirements=["alpha"]))
    assert codes(verdict) == ["module_missing"]
    message = verdict.critical[0].message
    assert "imports 'matplotlib', which no package of environment 'custom'" in message
    assert ("add matplotlib to the job's requirements (\"requirements\": [\"alpha\", "
            "\"matplotlib\"]), or name environment science" in message)
    assert "make an environment of exactly those packages" in message


async def test_a_provisioned_environment_is_probed_for_imports(
        environments: Environments, tmp_path: Path) -> None:
    await environments.prepare("tiny", [])
    verdict = await reviewer(environments, tmp_path).review_infrastructure(
        review_input("import alpha\nimport gamma\n", environment="tiny"))
    assert verdict.details["environment"]["provisioned"]
    assert codes(verdict) == ["module_missing"] and "'gamma'" in verdict.critical[0].message
    assert '("requirements": ["gamma"])' in verdict.critical[0].message  # the line to add


async def test_a_blocked_dependency_rejects_the_job(environments: Environments,
                                                    tmp_path: Path) -> None:
    verdict = await reviewer(environments, tmp_path).review_infrastructure(
        review_input("import alpha\n", requirements=["alpha"],
                     packages=PackagePolicy(block=["Beta"])))
    assert codes(verdict) == ["package_blocked"]
    assert "would install beta 2.0, which the run's package policy blocks" in \
        verdict.critical[0].message


async def test_an_allow_list_refuses_every_package_outside_it(environments: Environments,
                                                              tmp_path: Path) -> None:
    allowed = await reviewer(environments, tmp_path).review_infrastructure(
        review_input("import alpha\n", requirements=["alpha"],
                     packages=PackagePolicy(allow=["alpha", "beta"])))
    assert allowed.verdict == "APPROVE"
    refused = await reviewer(environments, tmp_path).review_infrastructure(
        review_input("import alpha\n", requirements=["alpha"],
                     packages=PackagePolicy(allow=["alpha"])))
    assert codes(refused) == ["package_not_allowed"] and "beta" in refused.critical[0].message


async def test_an_unknown_package_rejects_the_job_before_anything_is_installed(
        environments: Environments, tmp_path: Path) -> None:
    verdict = await reviewer(environments, tmp_path).review_infrastructure(
        review_input("import nosuchpkg\n", requirements=["nosuchpkg"]))
    assert "environment_not_found" in codes(verdict)
    assert "package 'nosuchpkg' was not found" in verdict.details["environment"]["error"]


async def test_requirements_the_worker_meets_are_reviewed_as_before(
        environments: Environments, tmp_path: Path) -> None:
    verdict = await reviewer(environments, tmp_path).review_infrastructure(
        review_input("import numpy\n", requirements=["numpy>=1.26"]))
    assert verdict.verdict == "APPROVE" and "environment" not in verdict.details
    assert verdict.details["packages"]["numpy"]


async def test_base_with_requirements_it_lacks_is_reviewed_as_requirements_alone(
        environments: Environments, tmp_path: Path) -> None:
    verdict = await reviewer(environments, tmp_path).review_infrastructure(
        review_input("import alpha\n", requirements=["alpha"], environment="base"))
    assert verdict.verdict == "APPROVE", verdict.critical
    assert verdict.details["environment"]["name"] == "custom"
