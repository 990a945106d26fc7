"""Reviewing a job's environment before anything is installed: what, whether allowed, enough.

A job that names an environment, or needs packages the worker's interpreter lacks, is
reviewed against its *resolved* environment: the reviewer resolves it (exact pins; nothing is
installed), reports every package and version that will be installed, applies the run's
package policy to each of them (dependencies too), and checks the job's imports against them
(against the environment's own interpreter, once it is provisioned on this host). A request
the installer cannot meet — an unknown name or package, conflicting pins, an unreachable
index — rejects the job with the installer's reason, before anything runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from packaging.utils import canonicalize_name

from activities.environments import EnvironmentProblem, Environments, Lock
from activities.review.common import Findings
from activities.review.imports import ImportUse
from activities.review.probe import Prober
from workflows.contracts.environments import BASE, package_name
from workflows.contracts.plan import JobSpec
from workflows.contracts.policy import PackagePolicy

ENVIRONMENT_CHECKS = ("environment_resolved", "packages_allowed")
MAX_LISTED = 200
MAX_LINE = 300
"""A longer requirements line is shown with the job's own requirements elided."""
MODULE_PACKAGES: dict[str, str] = {
    "sklearn": "scikit-learn", "PIL": "pillow", "yaml": "pyyaml", "cv2": "opencv-python",
    "skimage": "scikit-image", "bs4": "beautifulsoup4", "dateutil": "python-dateutil",
    "mpl_toolkits": "matplotlib", "pylab": "matplotlib", "attr": "attrs", "jwt": "pyjwt",
    "dotenv": "python-dotenv", "serial": "pyserial", "OpenSSL": "pyopenssl",
    "Crypto": "pycryptodome", "google": "protobuf", "pkg_resources": "setuptools",
}
"""Import names that differ from the package that provides them (the common ones)."""


async def review_environment(environments: Environments, job: JobSpec,
                             imports: dict[str, ImportUse], policy: PackagePolicy,
                             findings: Findings) -> dict[str, Any]:
    """Resolve the job's environment and judge it; the details say what will be installed."""
    findings.start(*ENVIRONMENT_CHECKS)
    try:
        name = None if job.environment == BASE else job.environment
        lock = await environments.resolve(environments.spec(name, job.requirements))
    except EnvironmentProblem as problem:
        findings.fail("environment_resolved", f"environment_{problem.kind}", problem.reason)
        return {"environment": {"name": job.environment or "custom", "error": problem.reason}}
    versions: dict[str, str] = {canonicalize_name(n): v for n, v in lock.versions().items()}
    _apply_policy(versions, policy, findings)
    installed = environments.installed(lock.digest)
    sets = _named_sets(environments)
    missing = _Missing(lock.spec.name, sets, job.requirements, findings)
    if installed is not None:
        await _probe_imports(environments.interpreter(installed), imports, lock, missing)
    else:
        _match_imports(imports, versions, lock, missing)
    listed = dict(sorted(versions.items())[:MAX_LISTED])
    return {"environment": {"name": lock.spec.name, "digest": lock.digest,
                            "python": lock.python, "provisioned": installed is not None,
                            "requirements": list(lock.spec.requirements),
                            "to_install": {} if installed is not None else listed,
                            "packages": listed, "package_count": len(versions)}}


def _apply_policy(versions: dict[str, str], policy: PackagePolicy, findings: Findings) -> None:
    blocked = sorted({canonicalize_name(n) for n in policy.block} & set(versions))
    for name in blocked:
        findings.fail("packages_allowed", "package_blocked",
                      f"the environment would install {name} {versions[name]}, which the "
                      "run's package policy blocks (review.packages.block); remove the "
                      "requirement that brings it in or change the policy")
    if policy.allow is not None:
        allowed = {canonicalize_name(n) for n in policy.allow}
        outside = sorted(set(versions) - allowed)
        if outside:
            findings.fail("packages_allowed", "package_not_allowed",
                          f"the environment would install {', '.join(outside[:20])}"
                          f"{' …' if len(outside) > 20 else ''}, not in the run's package "
                          "allow-list (review.packages.allow); add them there or drop the "
                          "requirement")


def _named_sets(environments: Environments) -> dict[str, set[str]]:
    """Each named set's own (top-level) package names, to say which set has a package."""
    sets: dict[str, set[str]] = {}
    for name in environments.catalog.names():
        try:
            wanted = environments.catalog.requirements(name)
        except EnvironmentProblem:
            continue
        sets[name] = {canonicalize_name(package_name(r))
                      for r in wanted}
    return sets


def _match_imports(imports: dict[str, ImportUse], versions: dict[str, str], lock: Lock,
                   missing: _Missing) -> None:
    for name, use in sorted(imports.items()):
        package = canonicalize_name(MODULE_PACKAGES.get(name, name))
        if package in versions or canonicalize_name(name) in versions:
            continue
        missing.add(name, use, f"environment {lock.spec.name!r}")


async def _probe_imports(python: str, imports: dict[str, ImportUse], lock: Lock,
                         missing: _Missing) -> None:
    probe = await Prober(python, ttl_s=0).probe(imports, [])
    for name, use in sorted(imports.items()):
        if not probe.modules[name].found:
            missing.add(name, use, f"environment {lock.spec.name!r} ({python})")


@dataclass
class _Missing:
    """Records an import the environment lacks, with the fix for this job."""

    environment: str
    sets: dict[str, set[str]]
    requirements: list[str]
    findings: Findings

    def add(self, name: str, use: ImportUse, where: str) -> None:
        if use.optional:
            self.findings.warn("packages_installed", "optional_module_missing",
                               f"optional import {name!r} is not provided by {where}", use.line)
        else:
            self.findings.fail("packages_installed", "module_missing",
                               f"imports {name!r}, which no package of {where} provides; "
                               + missing_fix(name, self.environment, self.sets,
                                             self.requirements), use.line)


def missing_fix(module: str, environment: str, sets: dict[str, set[str]],
                requirements: list[str] | None = None) -> str:
    """What to do about an import no package provides: add it, or name a set that has it.

    The advice gives the job's ``requirements`` line with the package added, ready to paste.
    Requirements without a named set make an environment of exactly those packages (the
    worker's own interpreter's packages are not in it), which the advice says plainly.
    """
    package = MODULE_PACKAGES.get(module, module.split(".")[0])
    having = [n for n, packages in sorted(sets.items())
              if canonicalize_name(package) in packages and n != environment]
    line = json.dumps({"requirements": [*(requirements or []), package]})[1:-1]
    if len(line) > MAX_LINE:
        line = f'"requirements": [..., {json.dumps(package)}]'
    fix = f"add {package} to the job's requirements ({line})"
    if having:
        fix += f", or name environment {having[0]} (which has it)"
    if environment == "custom":
        fix += ("; requirements without a named environment make an environment of exactly "
                "those packages")
    return fix
