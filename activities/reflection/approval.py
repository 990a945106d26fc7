"""Rules for a job the review panel rejected (approval retry, phase 4.5).

Matched on the reviewers' structured findings (``critical[].code``) and on the job spec
itself (resources over the policy are visible without reading any message). Finding messages
only supply names (which metric, which package) when a verdict's ``details`` does not.

Finding codes reflection understands (those the reviewers in ``activities.review_*`` emit):

- ``undeclared_metric`` — a check names a metric missing from ``expected_metrics``; the
  names come from ``details["undeclared_metrics"]`` or the message (``metric 'p_value'``).
- ``module_missing`` / ``package_missing`` / ``package_version`` — an import or requirement is
  not installed (or not in a matching version); no patch: the advice is to list the package in
  the job's ``requirements`` or name an environment that has it (``environment: science``).
- ``*_over_policy`` — a resource exceeds the policy's ceiling: clamped to it (a narrowing);
  ``memory_exceeds_total`` — more memory than the machine has: clamped to its total.
- ``syntax_error`` / ``missing_source`` / ``source_too_large`` — the code itself is broken.
- any other critical finding of the quality & safety reviewer — unsafe code.
"""

from __future__ import annotations

import re
from typing import Any, cast

from activities.reflection.rules import Diagnosis, quoted_names, unknown
from workflows.contracts.reflection import DiagnoseInput, PatchChange
from workflows.contracts.verdicts import Finding, ReviewVerdict

UNDECLARED_METRIC_CODES = frozenset({"undeclared_metric"})
MISSING_PACKAGE_CODES = frozenset({"module_missing", "package_missing", "missing_package",
                                   "missing_dependency"})
PACKAGE_VERSION_CODES = frozenset({"package_version"})
CODE_ERROR_CODES = frozenset({"syntax_error", "missing_source", "source_too_large"})
MEMORY_TOTAL_CODE = "memory_exceeds_total"
_METRIC_NAME = re.compile(r"""metric\s+['"]([^'"]{1,128})['"]""")

_Blocking = list[tuple[ReviewVerdict, Finding]]


def blocking_findings(verdicts: list[ReviewVerdict]) -> _Blocking:
    """Critical findings, plus the warnings of a rejection that gave no critical one."""
    found: _Blocking = []
    for verdict in verdicts:
        found.extend((verdict, f) for f in verdict.critical)
        if verdict.verdict == "REJECT" and not verdict.critical:
            found.extend((verdict, f) for f in verdict.warnings)
    return found


def diagnose_rejection(req: DiagnoseInput) -> Diagnosis:
    """Diagnose a rejection from the verdicts' findings and the job spec."""
    blocking = blocking_findings(req.verdicts)
    evidence = [f"{v.reviewer} {f.severity} {f.code}: {f.message}" for v, f in blocking]
    if not blocking and not _clamps(req, None):
        return unknown("the job was rejected but no reviewer finding says why; a person has "
                       "to read the verdicts", evidence)
    unsafe = [f for v, f in blocking if v.reviewer == "quality_safety"
              and f.severity == "critical" and f.code not in CODE_ERROR_CODES]
    if unsafe:
        codes = ", ".join(sorted({f.code for f in unsafe}))
        return Diagnosis("unsafe_code", "change_code", evidence=evidence,
                         reason=(f"the quality & safety review found unsafe code ({codes}); code "
                                 "is never patched automatically, a person must change it"))
    broken = sorted({f.code for _, f in blocking if f.code in CODE_ERROR_CODES})
    if broken:
        return Diagnosis("code_error", "fix the code", evidence=evidence,
                         reason=(f"the job's code cannot run ({', '.join(broken)}); code is "
                                 "never patched automatically, a person must fix it"))
    packages = [(v, f) for v, f in blocking
                if f.code in MISSING_PACKAGE_CODES | PACKAGE_VERSION_CODES]
    if packages:
        return _packages(req, packages, evidence)
    return _spec_fixes(req, blocking, evidence)


def _packages(req: DiagnoseInput, packages: _Blocking, evidence: list[str]) -> Diagnosis:
    names: list[str] = []
    for verdict, finding in packages:
        names.extend(_named(verdict, "missing_packages", finding)[:1])
    listed = ", ".join(dict.fromkeys(names)) or "a package the job needs"
    evidence.append(f"job requirements: {', '.join(req.job.requirements) or 'none'}")
    if any(f.code in MISSING_PACKAGE_CODES for _, f in packages):
        fix = (f"add {listed} to the job's requirements, or name an environment that has it "
               "(environment: science)")
        return Diagnosis("missing_dependency", fix, evidence=evidence,
                         reason=f"{listed} is not installed for the job; {fix}")
    fix = (f"put a version satisfying {listed} in the job's requirements, or relax the "
           "requirement")
    return Diagnosis("dependency_version", fix, evidence=evidence,
                     reason=f"the installed version does not satisfy {listed}; {fix}")


def _spec_fixes(req: DiagnoseInput, blocking: _Blocking, evidence: list[str]) -> Diagnosis:
    """Declare undeclared metrics and clamp resources; what is left unexplained lowers trust."""
    handled: set[int] = set()
    metrics: list[str] = []
    for verdict, finding in blocking:
        if finding.code in UNDECLARED_METRIC_CODES:
            names = _metric_names(verdict, finding)
            metrics.extend(n for n in names if n not in req.job.expected_metrics
                           and n not in metrics)
            if names:
                handled.add(id(finding))
    changes: list[PatchChange] = []
    causes: list[tuple[str, str]] = []
    if metrics:
        changes.append(PatchChange(field="expected_metrics", old_value=req.job.expected_metrics,
                                   new_value=[*req.job.expected_metrics, *metrics],
                                   reason=f"declare {', '.join(metrics)}, which checks use"))
        causes.append(("undeclared_metric", "declare_metric"))
    clamps = _clamps(req, _machine_memory(blocking))
    if clamps:
        changes.extend(clamps)
        causes.append(("resources_over_policy", "clamp_resources"))
        handled.update(id(f) for _, f in blocking if _is_resource_code(f.code))
    if not changes:
        codes = ", ".join(sorted({f.code for _, f in blocking}))
        return unknown(f"the job was rejected for {codes}; no rule can patch that, a person "
                       "has to change the job", evidence)
    left = sorted({f.code for _, f in blocking if id(f) not in handled})
    if left:
        evidence.append(f"not addressed by the patch: {', '.join(left)}")
    what = "; ".join(c.reason for c in changes)
    return Diagnosis(causes[0][0], "+".join(fix for _, fix in causes), evidence=evidence,
                     changes=changes, known=not left,
                     reason=f"rejected for an inconsistent job spec; patch: {what}"
                            + (f" (findings left unaddressed: {', '.join(left)})" if left else ""))


def _named(verdict: ReviewVerdict, key: str, finding: Finding) -> list[str]:
    """Names from the verdict's structured details, else those quoted in the message."""
    listed: Any = verdict.details.get(key)
    if isinstance(listed, list):
        items = cast("list[object]", listed)
        names = [x for x in items if isinstance(x, str) and 0 < len(x) <= 128]
        if names:
            return names
    return quoted_names(finding.message)


def _metric_names(verdict: ReviewVerdict, finding: Finding) -> list[str]:
    """The metrics a finding is about: ``metric 'x'`` in its message, never a check's value."""
    if verdict.details.get("undeclared_metrics"):
        return _named(verdict, "undeclared_metrics", finding)
    named = _METRIC_NAME.findall(finding.message)
    return named[:1] or quoted_names(finding.message)[:1]


def _is_resource_code(code: str) -> bool:
    return code.endswith("_over_policy") or code == MEMORY_TOTAL_CODE


def _machine_memory(blocking: _Blocking) -> int | None:
    """The machine's total memory, when the infrastructure reviewer said the job wants more."""
    for verdict, finding in blocking:
        total: Any = verdict.details.get("memory_total_mb")
        if finding.code == MEMORY_TOTAL_CODE and isinstance(total, int) and total >= 16:
            return total
    return None


def _clamps(req: DiagnoseInput, machine_mb: int | None) -> list[PatchChange]:
    """Resources above the policy's ceilings (or the machine), brought down to them."""
    res, policy = req.job.resources, req.policy
    changes: list[PatchChange] = []
    memory_cap = min(int(policy.max_memory_mb), machine_mb or int(policy.max_memory_mb))
    if res.memory_mb > memory_cap:
        where = "the machine's" if memory_cap < policy.max_memory_mb else "the policy's"
        changes.append(PatchChange(field="resources.memory_mb", old_value=res.memory_mb,
                                   new_value=memory_cap,
                                   reason=f"clamp memory to {where} {memory_cap} MiB"))
    if res.timeout_s > policy.max_timeout_s:
        changes.append(PatchChange(field="resources.timeout_s", old_value=res.timeout_s,
                                   new_value=float(policy.max_timeout_s),
                                   reason=(f"clamp the time limit to the policy's "
                                           f"{policy.max_timeout_s:g} s")))
    if res.cpus > policy.max_cpus:
        changes.append(PatchChange(field="resources.cpus", old_value=res.cpus,
                                   new_value=float(policy.max_cpus),
                                   reason=f"clamp cpus to the policy's {policy.max_cpus:g}"))
    return changes
