"""The infrastructure reviewer: can the machine that runs jobs run this one?

Unlike the other two reviewers it looks at the machine, not just the spec, so it runs on the
sandbox pool: the job interpreter is probed for every module the source imports and every
requirement the job pins, and memory, disk, CPUs and the timeout are checked against what the
job asks for. The numbers go into ``details`` (its resource validation).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import psutil

from activities.environments import Environments
from activities.environments.activity import BaseVersions, runs_in_base
from activities.review.common import Findings, ParseFailure, parse_job, verdict
from activities.review.environment import review_environment
from activities.review.imports import ImportUse, job_imports
from activities.review.probe import Prober, ProbeResult
from activities.review.requirements import (
    Requirement,
    RequirementError,
    parse_requirement,
    satisfies,
)
from workflows.catalogue import REVIEW_INFRASTRUCTURE
from workflows.contracts.executive import ReviewInput, ReviewVerdict

INFRA_CHECKS = ("packages_installed", "requirements_satisfied", "memory_available",
                "disk_available", "timeout_within_policy", "cpus_available")
DISK_WARN_MB = 1024
DISK_CRITICAL_MB = 256


class InfrastructureReviewer:
    """Reviews jobs against the sandbox machine; one instance per sandbox worker.

    Args:
        work_dir: where jobs' working directories are created (its disk is checked).
        python: the interpreter jobs run with (probed for packages).
        probe_timeout_s: how long one package probe may take.
        cache_ttl_s: how long a probe's answers are reused.
        disk_warn_mb: free space below which the disk check warns.
        disk_critical_mb: free space below which it rejects.
    """

    def __init__(self, work_dir: Path, python: str = sys.executable, *,
                 probe_timeout_s: float = 30.0, cache_ttl_s: float = 60.0,
                 disk_warn_mb: int = DISK_WARN_MB,
                 disk_critical_mb: int = DISK_CRITICAL_MB,
                 environments: Environments | None = None) -> None:
        self._work_dir = work_dir.expanduser().resolve()
        self._environments = environments
        self.prober = Prober(python, timeout_s=probe_timeout_s, ttl_s=cache_ttl_s)
        self._disk_warn_mb = disk_warn_mb
        self._disk_critical_mb = disk_critical_mb

    @REVIEW_INFRASTRUCTURE.defn
    async def review_infrastructure(self, req: ReviewInput) -> ReviewVerdict:
        """Probe packages, memory, disk, CPUs and the timeout for one job."""
        findings = Findings()
        findings.start(*INFRA_CHECKS)
        imports = await asyncio.to_thread(self._imports, req, findings)  # parsing is CPU work
        requirements = _requirements(req, findings)
        probe = await self.prober.probe(
            imports, [r.name for r in requirements if r.applies])
        details: dict[str, Any] = {"python": self.prober.python,
                                   "python_version": probe.python_version}
        if self._environments is not None and not await runs_in_base(
                req.job.environment, [r.text for r in requirements if r.applies],
                _versions_from(probe)):
            details.update(await review_environment(self._environments, req.job, imports,
                                                    req.policy.packages, findings))
        else:
            details.update(_packages(imports, requirements, probe, findings,
                                     self.prober.python))
        details.update(_memory(req, findings))
        details.update(self._disk(findings))
        details.update(_timeout_and_cpus(req, findings))
        return verdict("infrastructure", findings, "the sandbox machine", details=details)

    async def base_versions(self, names: list[str]) -> dict[str, str | None]:
        """Installed version of each distribution in the worker's interpreter (or None)."""
        return (await self.prober.probe([], names)).distributions

    def _imports(self, req: ReviewInput, findings: Findings) -> dict[str, ImportUse]:
        source = req.job.source or ""
        parsed = parse_job(source, req.job.filename or "job.py") if source.strip() else None
        if parsed is None or isinstance(parsed, ParseFailure):
            findings.warn("packages_installed", "imports_unknown",
                          "the job's source could not be read, so its imports were not checked")
            return {}
        local = [*req.input_names, *req.dependency_artifacts, req.job.filename or ""]
        try:
            return job_imports(parsed, local_files=local)
        except RecursionError:
            findings.warn("packages_installed", "imports_unknown",
                          "the job's source nests too deeply to list its imports")
            return {}

    def _disk(self, findings: Findings) -> dict[str, Any]:
        where = self._work_dir
        while not where.exists() and where != where.parent:
            where = where.parent  # the work directory may not exist before the first job
        free_mb = shutil.disk_usage(where).free >> 20
        if free_mb < self._disk_critical_mb:
            findings.fail("disk_available", "disk_full",
                          f"only {free_mb} MiB free on the disk of {self._work_dir} (jobs need "
                          f"at least {self._disk_critical_mb} MiB); free some space")
        elif free_mb < self._disk_warn_mb:
            findings.warn("disk_available", "disk_low",
                          f"only {free_mb} MiB free on the disk of {self._work_dir}")
        return {"disk_available_mb": free_mb}


def _versions_from(probe: ProbeResult) -> BaseVersions:
    async def versions(names: list[str]) -> dict[str, str | None]:
        return {name: probe.distributions.get(name) for name in names}
    return versions


def _requirements(req: ReviewInput, findings: Findings) -> list[Requirement]:
    parsed: list[Requirement] = []
    for text in req.job.requirements:
        try:
            parsed.append(parse_requirement(text))
        except RequirementError as err:
            findings.fail("requirements_satisfied", "bad_requirement", str(err))
    return parsed


def _packages(imports: dict[str, ImportUse], requirements: list[Requirement],
              probe: ProbeResult, findings: Findings, python: str) -> dict[str, Any]:
    where = f"the job interpreter {python} (Python {probe.python_version})"
    packages: dict[str, str | None] = {}
    for name, use in sorted(imports.items()):
        status = probe.modules[name]
        packages.update(status.dists)
        if status.found:
            continue
        packages.setdefault(name, None)
        fix = "install it there or remove the import"
        if use.optional:
            findings.warn("packages_installed", "optional_module_missing",
                          f"optional import {name!r} is not installed in {where}", use.line)
        else:
            findings.fail("packages_installed", "module_missing",
                          f"imports {name!r}, which is not installed in {where}; {fix}",
                          use.line)
    for requirement in requirements:
        if not requirement.applies:
            continue
        installed = probe.distributions[requirement.name]
        packages[requirement.name] = installed
        if installed is None:
            findings.fail("requirements_satisfied", "package_missing",
                          f"requirement {requirement.text!r} is not installed in {where}")
        elif not satisfies(requirement, installed):
            findings.fail("requirements_satisfied", "package_version",
                          f"requirement {requirement.text!r} is not met: {requirement.name} "
                          f"{installed} is installed in {where}")
    return {"packages": packages,
            "modules": {name: probe.modules[name].found for name in sorted(imports)}}


def _memory(req: ReviewInput, findings: Findings) -> dict[str, Any]:
    memory = psutil.virtual_memory()
    return memory_check(req.job.resources.memory_mb, memory.total >> 20,
                        memory.available >> 20, findings)


def memory_check(wanted: int, total_mb: int, available_mb: int,
                 findings: Findings) -> dict[str, Any]:
    """Judge a memory request against the machine's total and currently free memory."""
    if wanted > total_mb:
        findings.fail("memory_available", "memory_exceeds_total",
                      f"resources.memory_mb = {wanted} is more than this machine's "
                      f"{total_mb} MiB of memory; lower it")
    elif wanted > available_mb:
        findings.warn("memory_available", "memory_busy",
                      f"resources.memory_mb = {wanted} is more than the {available_mb} MiB "
                      "free right now; the job may wait for memory or run out of it")
    return {"memory_required_mb": wanted, "memory_available_mb": available_mb,
            "memory_total_mb": total_mb}


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the CPUs this process may use (containers)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _timeout_and_cpus(req: ReviewInput, findings: Findings) -> dict[str, Any]:
    resources, policy = req.job.resources, req.policy
    if resources.timeout_s > policy.max_timeout_s:
        findings.fail("timeout_within_policy", "timeout_over_policy",
                      f"resources.timeout_s = {resources.timeout_s:g} is over the policy "
                      f"limit of {policy.max_timeout_s:g} s; lower it")
    cpus = _cpu_count()
    if resources.cpus > cpus:
        findings.warn("cpus_available", "cpus_oversubscribed",
                      f"resources.cpus = {resources.cpus:g} is more than the {cpus} CPUs "
                      "of this machine; the job will run slower than planned")
    return {"timeout_s": resources.timeout_s, "max_timeout_s": policy.max_timeout_s,
            "cpus_requested": resources.cpus, "cpus_available": cpus}
