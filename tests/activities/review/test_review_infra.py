"""The infrastructure reviewer probes the real job interpreter and the real machine."""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import sys
from pathlib import Path

import psutil
import pytest
from temporalio.exceptions import ApplicationError

from activities.review.common import Findings
from activities.review.infra import InfrastructureReviewer, memory_check
from activities.review.probe import Prober
from activities.review.requirements import (
    RequirementError,
    parse_requirement,
    satisfies,
)
from workflows.contracts.plan import JobSpec, Resources
from workflows.contracts.policy import ReviewPolicy
from workflows.contracts.verdicts import Finding, ReviewInput, ReviewVerdict

PYDANTIC = importlib.metadata.version("pydantic")


def job_input(code: str = "import json\n", *, requirements: list[str] | None = None,
              resources: Resources | None = None, policy: ReviewPolicy | None = None,
              input_names: list[str] | None = None) -> ReviewInput:
    spec = JobSpec(code=code, expected_metrics=["m"], requirements=requirements or [],
                   resources=resources or Resources(memory_mb=64))
    return ReviewInput(task_id="t", action="a", policy=policy or ReviewPolicy(),
                       input_names=input_names or [],
                       job=spec.model_copy(update={"source": code, "filename": "job.py"}))


@pytest.fixture
def reviewer(tmp_path: Path) -> InfrastructureReviewer:
    return InfrastructureReviewer(tmp_path / "work", sys.executable)


def found(verdict: ReviewVerdict, code: str) -> Finding:
    matches = [f for f in [*verdict.critical, *verdict.warnings] if f.code == code]
    assert matches, f"no {code} finding in {verdict.critical + verdict.warnings}"
    return matches[0]


async def test_installed_imports_approve_with_versions_in_details(
        reviewer: InfrastructureReviewer) -> None:
    verdict = await reviewer.review_infrastructure(
        job_input("import json\nimport pydantic\nfrom psutil import Process\n",
                  requirements=["pydantic>=2"]))
    assert verdict.reviewer == "infrastructure" and verdict.verdict == "APPROVE"
    assert verdict.details["modules"] == {"psutil": True, "pydantic": True}
    assert verdict.details["packages"]["pydantic"] == PYDANTIC
    assert verdict.details["packages"]["psutil"] == importlib.metadata.version("psutil")
    assert verdict.details["python_version"] == sys.version.split()[0]
    assert verdict.details["memory_required_mb"] == 64
    assert 0 < verdict.details["memory_available_mb"] <= verdict.details["memory_total_mb"]
    assert verdict.details["disk_available_mb"] > 0
    assert all(verdict.checks.values())


async def test_missing_module_rejects_naming_it_and_its_line(
        reviewer: InfrastructureReviewer) -> None:
    code = "import json\n\nimport assay_no_such_module.sub as m\n"
    verdict = await reviewer.review_infrastructure(job_input(code))
    finding = found(verdict, "module_missing")
    assert verdict.verdict == "REJECT" and finding.line == 3
    assert "'assay_no_such_module'" in finding.message and sys.executable in finding.message
    assert verdict.details["packages"]["assay_no_such_module"] is None
    assert verdict.checks["packages_installed"] is False


async def test_optional_and_local_imports_do_not_reject(
        reviewer: InfrastructureReviewer) -> None:
    code = ("try:\n    import assay_optional_accel\nexcept ImportError:\n    pass\n"
            "import helpers\nfrom . import sibling\n"
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import assay_types_only\n")
    verdict = await reviewer.review_infrastructure(job_input(code, input_names=["helpers.py"]))
    assert verdict.verdict == "APPROVE"
    assert found(verdict, "optional_module_missing").line == 2
    assert set(verdict.details["modules"]) == {"assay_optional_accel"}


async def test_requirement_pinned_above_installed_rejects_naming_both_versions(
        reviewer: InfrastructureReviewer) -> None:
    verdict = await reviewer.review_infrastructure(job_input(requirements=["pydantic>=999"]))
    finding = found(verdict, "package_version")
    assert verdict.verdict == "REJECT"
    assert "pydantic>=999" in finding.message and f"pydantic {PYDANTIC}" in finding.message


async def test_requirement_not_installed_rejects(reviewer: InfrastructureReviewer) -> None:
    # (an unparseable requirement never gets this far: tests/workflows/contracts refuses it)
    verdict = await reviewer.review_infrastructure(
        job_input(requirements=["assay-not-a-package==1.0"]))
    assert "assay-not-a-package==1.0" in found(verdict, "package_missing").message
    assert verdict.details["packages"]["assay-not-a-package"] is None


async def test_timeout_over_policy_rejects_and_too_many_cpus_warns(
        reviewer: InfrastructureReviewer) -> None:
    cpus = len(os.sched_getaffinity(0))
    verdict = await reviewer.review_infrastructure(job_input(
        resources=Resources(memory_mb=64, timeout_s=7200, cpus=cpus + 1),
        policy=ReviewPolicy(max_timeout_s=3600, max_cpus=512)))
    assert found(verdict, "timeout_over_policy").severity == "critical"
    assert found(verdict, "cpus_oversubscribed").severity == "warning"
    assert verdict.details["cpus_available"] == cpus


async def test_memory_beyond_the_machine_rejects(reviewer: InfrastructureReviewer) -> None:
    total_mb = psutil.virtual_memory().total >> 20
    verdict = await reviewer.review_infrastructure(
        job_input(resources=Resources(memory_mb=min(total_mb * 2, 262_144))))
    assert found(verdict, "memory_exceeds_total").severity == "critical"
    assert verdict.details["memory_total_mb"] == total_mb


def test_memory_rules() -> None:
    findings = Findings()
    memory_check(3000, total_mb=4000, available_mb=2000, findings=findings)
    assert [f.code for f in findings.warnings] == ["memory_busy"] and not findings.critical
    findings = Findings()
    assert memory_check(1000, 4000, 2000, findings)["memory_available_mb"] == 2000
    assert not findings.warnings and not findings.critical


async def test_disk_thresholds_apply_to_real_free_space(tmp_path: Path) -> None:
    huge = 1 << 40  # MiB: more than any disk has free
    rejecting = InfrastructureReviewer(tmp_path / "not" / "yet", disk_critical_mb=huge)
    verdict = await rejecting.review_infrastructure(job_input())
    assert found(verdict, "disk_full").severity == "critical"
    warning = InfrastructureReviewer(tmp_path, disk_warn_mb=huge)
    assert found(await warning.review_infrastructure(job_input()), "disk_low")


async def test_probes_are_cached_and_shared(reviewer: InfrastructureReviewer) -> None:
    reqs = [job_input("import pydantic\n") for _ in range(20)]
    await asyncio.gather(*(reviewer.review_infrastructure(r) for r in reqs))
    assert reviewer.prober.runs == 1
    await reviewer.review_infrastructure(job_input("import pydantic\nimport psutil\n"))
    assert reviewer.prober.runs == 2  # only the new name is probed


async def test_cached_answers_expire() -> None:
    now = [0.0]
    prober = Prober(sys.executable, ttl_s=60, clock=lambda: now[0])
    await prober.probe(["pydantic"], [])
    now[0] = 59.0
    await prober.probe(["pydantic"], [])
    assert prober.runs == 1
    now[0] = 61.0
    result = await prober.probe(["pydantic"], ["pydantic"])
    assert prober.runs == 2 and result.distributions == {"pydantic": PYDANTIC}


async def test_missing_interpreter_is_a_clear_error(tmp_path: Path) -> None:
    reviewer = InfrastructureReviewer(tmp_path, str(tmp_path / "no-python"))
    with pytest.raises(ApplicationError) as caught:
        await reviewer.review_infrastructure(job_input())
    assert caught.value.type == "JobInterpreterMissing"
    assert str(tmp_path / "no-python") in str(caught.value)


def fake_interpreter(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fake-python"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


async def test_hung_probe_times_out(tmp_path: Path) -> None:
    prober = Prober(fake_interpreter(tmp_path, "exec sleep 30"), timeout_s=0.5)
    with pytest.raises(ApplicationError) as caught:
        await prober.probe(["x"], [])
    assert caught.value.type == "ProbeTimeout"


async def test_failing_probe_reports_its_stderr(tmp_path: Path) -> None:
    prober = Prober(fake_interpreter(tmp_path, "echo 'no importlib here' >&2; exit 3"))
    with pytest.raises(ApplicationError, match="no importlib here") as caught:
        await prober.probe(["x"], [])
    assert caught.value.type == "ProbeFailed"


@pytest.mark.parametrize(("text", "installed", "ok"), [
    ("numpy", "2.4.6", True),
    ("numpy==2.4.6", "2.4.6", True),
    ("numpy==2.4", "2.4.6", False),
    ("numpy>=1.26", "2.4.6", True),
    ("numpy>=3", "2.4.6", False),
    ("numpy>=1.26,<2", "2.4.6", False),
    ("numpy<=2.4.6", "2.4.6", True),
    ("numpy!=2.4.6", "2.4.6", False),
    ("numpy==2.4.*", "2.4.6", True),
    ("numpy~=2.3", "2.4.6", True),
    ("numpy~=2.3.0", "2.4.6", False),
    ("numpy~=2.4.0", "2.4.6", True),
    ("numpy~=2.0.0", "2.1", False),
    ("numpy~=2.0", "2.4.6", True),
    ("numpy[extra] > 2", "2.4.6", True),
])
def test_requirements_parse_and_compare(text: str, installed: str, ok: bool) -> None:
    requirement = parse_requirement(text)
    assert requirement.name == "numpy"
    assert satisfies(requirement, installed) is ok


@pytest.mark.parametrize("text", ["", "numpy >>> 2", ">=1.0", "numpy==1.0 extra"])
def test_unparseable_requirements_are_refused(text: str) -> None:
    with pytest.raises(RequirementError, match="cannot be parsed"):
        parse_requirement(text)


def test_markers_that_exclude_this_machine_do_not_apply() -> None:
    assert not parse_requirement('pywin32; sys_platform == "win32"').applies
