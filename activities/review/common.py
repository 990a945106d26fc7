"""What the three reviewers share: collecting findings and turning them into a verdict.

Every reviewer runs a fixed list of named checks. A check starts out true and turns false as
soon as a rule under it finds anything (a warning or a critical finding), so ``checks`` always
names every rule group the reviewer ran. The verdict is APPROVE exactly when no finding is
critical, and the confidence is a deterministic function of the findings, so the same job
always gets the same verdict.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from workflows.contracts.pysource import parse_python
from workflows.contracts.verdicts import Finding, Reviewer, ReviewVerdict, Severity

CLEAN_CONFIDENCE = 0.95
WARNING_PENALTY = 0.05
CONFIDENCE_FLOOR = 0.5
REJECT_CONFIDENCE = 0.9
MAX_FINDINGS = 50
"""Findings kept per severity, so a pathological source cannot bloat the workflow history."""


@dataclass
class Findings:
    """Findings of one review, grouped under the named checks that produced them."""

    checks: dict[str, bool] = field(default_factory=dict[str, bool])
    warnings: list[Finding] = field(default_factory=list[Finding])
    critical: list[Finding] = field(default_factory=list[Finding])
    dropped: int = 0

    def start(self, *names: str) -> None:
        """Declare checks that ran (true until a finding turns them false)."""
        for name in names:
            self.checks.setdefault(name, True)

    def add(self, check: str, code: str, message: str, severity: Severity = "warning",
            line: int | None = None) -> None:
        """Record a finding under ``check``; ``info`` findings do not affect the check."""
        if severity == "info":
            return
        self.checks[check] = False
        bucket = self.critical if severity == "critical" else self.warnings
        if any(f.code == code and f.line == line and f.message == message for f in bucket):
            return  # the same node reached by two rules is one finding
        if len(bucket) >= MAX_FINDINGS:
            self.dropped += 1
            return
        bucket.append(Finding(code=code, message=message, severity=severity, line=line))

    def warn(self, check: str, code: str, message: str, line: int | None = None) -> None:
        """Record a warning."""
        self.add(check, code, message, "warning", line)

    def fail(self, check: str, code: str, message: str, line: int | None = None) -> None:
        """Record a critical finding (the reviewer will reject)."""
        self.add(check, code, message, "critical", line)


def confidence(findings: Findings) -> float:
    """0.95 when clean, 0.05 less per warning (floor 0.5); 0.9 and up for a rejection.

    A rejection rests on a rule that matched, so it is confident whatever the warnings say;
    each further critical finding makes it a little more so.
    """
    if findings.critical:
        return min(0.99, REJECT_CONFIDENCE + 0.03 * (len(findings.critical) - 1))
    return max(CONFIDENCE_FLOOR, CLEAN_CONFIDENCE - WARNING_PENALTY * len(findings.warnings))


def _located(finding: Finding) -> str:
    where = f" (line {finding.line})" if finding.line is not None else ""
    return f"{finding.message}{where}"


def reasoning(findings: Findings, subject: str) -> str:
    """One or two sentences saying what decided the verdict."""
    if findings.critical:
        first = _located(findings.critical[0])
        more = len(findings.critical) - 1
        tail = f" There {'is' if more == 1 else 'are'} {more} more critical finding" \
               f"{'' if more == 1 else 's'}." if more else ""
        return f"Rejected: {first}.{tail}"
    if findings.warnings:
        codes = sorted({f.code for f in findings.warnings})
        return (f"Approved: {subject} raised no critical finding; "
                f"{len(findings.warnings)} warning(s): {', '.join(codes)}.")
    return f"Approved: {subject} passed every check."


def verdict(reviewer: Reviewer, findings: Findings, subject: str,
            details: dict[str, Any] | None = None) -> ReviewVerdict:
    """The structured verdict for ``findings``."""
    extra: dict[str, Any] = dict(details or {})
    if findings.dropped:
        extra["findings_dropped"] = findings.dropped
    return ReviewVerdict(
        reviewer=reviewer,
        verdict="REJECT" if findings.critical else "APPROVE",
        confidence=round(confidence(findings), 4),
        checks=dict(findings.checks),
        warnings=list(findings.warnings),
        critical=list(findings.critical),
        reasoning=reasoning(findings, subject),
        details=extra,
    )


MAX_SOURCE_BYTES = 1_000_000
"""Largest job source the reviewers analyse; anything bigger is refused as a whole."""


@dataclass(frozen=True)
class ParseFailure:
    """Why a job's source could not be parsed, and where."""

    message: str
    line: int | None = None


def parse_job(source: str, filename: str) -> ast.Module | ParseFailure:
    """Parse a job's source, turning every way it can fail into a located message."""
    try:
        # Warnings (an invalid escape) are the job's business: parse_python keeps them out.
        return parse_python(source, filename=filename)
    except SyntaxError as err:
        where = f"line {err.lineno}, column {err.offset}" if err.lineno else "unknown line"
        return ParseFailure(f"{filename} does not parse: {err.msg} at {where}; fix the syntax",
                            err.lineno)
    except ValueError as err:  # null bytes in the source
        return ParseFailure(f"{filename} cannot be parsed: {err}")
    except (RecursionError, MemoryError):
        return ParseFailure(f"{filename} is nested too deeply to parse; simplify the code")
