"""Rules for a result whose evidence did not verify (verification retry, phase 6.5).

Often the evidence exists but is not where it was expected (a file written into a
subdirectory, ``Results.CSV`` for ``results.csv``): then the fix is to re-scan and re-link the
working directory and verify again, without running the job again. A check that fails on a
metric the job did report is different: running the same job again gives the same number.
"""

from __future__ import annotations

from typing import Any

from activities.reflection.rules import Diagnosis, unknown
from workflows.contracts.estimates import estimate_problem, reading
from workflows.contracts.execution import ExecutionOutcome, Verification
from workflows.contracts.reflection import DiagnoseInput

METRICS_FILE = "metrics.json"


def diagnose_verification(req: DiagnoseInput) -> Diagnosis:
    """Diagnose a failed verification from its structured verdict and the job's outcome."""
    ver, outcome = req.verification, req.outcome
    if ver is None:
        return unknown("verification failed but its verdict was not recorded", [])
    evidence = list(ver.missing)
    if outcome is not None and outcome.outcome != "succeeded":
        return unknown(f"verification ran on a job that ended as {outcome.outcome}; a person "
                       "has to look", evidence)
    metrics = outcome.metrics if outcome is not None else {}
    malformed = [p for name, raw in metrics.items() if (p := estimate_problem(name, raw))]
    if malformed:
        return Diagnosis("invalid_metrics", "fix_metrics_output", evidence=evidence,
                         reason=(f"{'; '.join(malformed[:3])}; the job's code must write each "
                                 "estimate as {\"value\", \"ci\": [low, high], \"level\", ...}"))
    failed = [r for r in ver.checks if not r.passed and _reported(metrics, r.check.metric)]
    if failed:
        said = "; ".join(r.reason or r.check.describe() for r in failed)
        return Diagnosis("acceptance_not_met", "revise_method_or_criteria", evidence=evidence,
                         reason=(f"the job reported its metrics but they miss the acceptance "
                                 f"criteria ({said}); running the same job again would give "
                                 "the same numbers"))
    if outcome is not None and outcome.metrics_error:
        return Diagnosis("invalid_metrics", "fix_metrics_output", evidence=evidence,
                         reason=f"{outcome.metrics_error}; the job's code must write it correctly")
    return _missing(req, ver, outcome, evidence)


def _missing(req: DiagnoseInput, ver: Verification, outcome: ExecutionOutcome | None,
             evidence: list[str]) -> Diagnosis:
    produced = {a.name for a in outcome.artifacts} if outcome is not None else set[str]()
    verified = {a.name for a in ver.artifacts}
    invalid = [n for n in req.job.expected_artifacts if n in produced and n not in verified]
    if invalid:
        return Diagnosis("invalid_artifact", "fix_artifact_output", evidence=evidence,
                         reason=(f"{', '.join(invalid)} was produced but is empty, gone or "
                                 "changed after the job ended; re-linking cannot fix that"))
    metrics = outcome.metrics if outcome is not None else {}
    absent_metrics = [m for m in req.job.expected_metrics if m not in metrics]
    absent_metrics += [r.check.metric for r in ver.checks
                       if not r.passed and not _reported(metrics, r.check.metric)
                       and r.check.metric not in absent_metrics]
    absent_files = [n for n in req.job.expected_artifacts if n not in verified]
    if absent_metrics and METRICS_FILE in produced:
        return Diagnosis("missing_metric", "write_metric", evidence=evidence,
                         reason=(f"{METRICS_FILE} exists but lacks {', '.join(absent_metrics)}; "
                                 "the job's code must write them"))
    if not absent_files and not absent_metrics:
        return unknown("verification failed but every expected artifact and metric is "
                       "accounted for; a person has to read its summary", evidence)
    relink = {name: "expected artifact not found under its name" for name in absent_files}
    if absent_metrics:
        relink.setdefault(METRICS_FILE, f"metrics {', '.join(absent_metrics)} missing and no "
                                        f"{METRICS_FILE} in the working directory")
    return Diagnosis("missing_artifact", "rescan_and_relink", evidence=evidence, relink=relink,
                     reason=(f"the job succeeded but {', '.join(relink)} "
                             f"{'is' if len(relink) == 1 else 'are'} not where expected; "
                             "re-scanning its working directory and verifying again"))


def _reported(metrics: dict[str, Any], name: str) -> bool:
    """Whether the job reported the metric a check names (``r2.ci_low`` reads ``r2``)."""
    return reading(metrics, name)[0] is not None
