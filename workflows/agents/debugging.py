"""The debuggers' fixes: guardrails for a code patch, and how the best fix is chosen.

Pure and deterministic, for the TaskWorkflow. A debugger may change the job's code (and its
package list); it may not touch the evidence bar, the arguments, the script's name, or ask for
more resources. Among fixes that ran, the output processor prefers one that succeeded, whose
results other fixes reproduced, that several debuggers wrote alike, that left more of the
promised evidence, and that its debugger was surer of — in that order.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Any

from workflows.constants import digest
from workflows.contracts.execution import ExecutionOutcome
from workflows.contracts.plan import JobSpec
from workflows.contracts.policy import ReviewPolicy
from workflows.contracts.pysource import parse_python
from workflows.contracts.roles import DEBUG_STRATEGIES, DebugStrategy, EnvironmentFacts
from workflows.contracts.verdicts import ReviewVerdict


def check_code_patch(old: JobSpec, new: JobSpec, policy: ReviewPolicy) -> list[str]:
    """Every guardrail ``new`` breaks as a debugger's fix of ``old`` (empty: allowed)."""
    found: list[str] = []
    if code_key(old) == code_key(new) and old.requirements == new.requirements:
        found.append("the fix changes nothing: the same code would fail the same way")
    if new.filename != old.filename:
        found.append(f"the fix renames the script from {old.filename} to {new.filename}")
    if new.expected_artifacts != old.expected_artifacts:
        found.append("the fix changes expected_artifacts: the evidence a result needs is fixed")
    dropped = [m for m in old.expected_metrics if m not in new.expected_metrics]
    if dropped:
        found.append(f"the fix drops expected metrics {', '.join(dropped)}")
    if new.args != old.args:
        found.append("the fix changes the job's arguments: debuggers fix code, not inputs")
    a, b = old.resources, new.resources
    for name, before, after, ceiling in (
            ("memory_mb", a.memory_mb, b.memory_mb, policy.max_memory_mb),
            ("timeout_s", a.timeout_s, b.timeout_s, policy.max_timeout_s),
            ("cpus", a.cpus, b.cpus, policy.max_cpus)):
        if after > before:
            found.append(f"the fix raises resources.{name} from {before:g} to {after:g} "
                         f"(ceiling {ceiling:g}): a fix may not ask for more")
    return found


def code_key(job: JobSpec) -> str:
    """A digest of the job's code, blind to trailing spaces and blank lines at the end."""
    lines = [line.rstrip() for line in (job.source or job.code or "").splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return digest("\n".join(lines).encode())


@dataclass
class Candidate:
    """One debugger's fix on its way through guardrails, review and a run."""

    strategy: DebugStrategy
    job: JobSpec
    diagnosis: str
    confidence: float
    agreeing: list[DebugStrategy] = field(default_factory=list[DebugStrategy])
    """Strategies (this one included) whose fix is the same code."""
    verdicts: list[ReviewVerdict] = field(default_factory=list[ReviewVerdict])
    outcome: ExecutionOutcome | None = None


def group_alike(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per distinct code, listing every strategy that wrote it."""
    groups: dict[str, Candidate] = {}
    for c in candidates:
        key = code_key(c.job)
        if key in groups:
            first = groups[key]
            first.agreeing.append(c.strategy)
            first.confidence = max(first.confidence, c.confidence)
        else:
            c.agreeing = [c.strategy]
            groups[key] = c
    return list(groups.values())


def choose(candidates: list[Candidate]) -> Candidate | None:
    """The best fix that ran successfully, or None if none did."""
    ran = [c for c in candidates if c.outcome is not None and c.outcome.outcome == "succeeded"]
    if not ran:
        return None
    results = [result_key(c) for c in ran]

    def rank(index: int) -> tuple[int, int, int, float, int]:
        c = ran[index]
        return (results.count(results[index]), len(c.agreeing), evidence_found(c),
                c.confidence, -DEBUG_STRATEGIES.index(c.strategy))

    return ran[max(range(len(ran)), key=rank)]


def result_key(c: Candidate) -> str:
    """What a fix produced, for agreement: artifact names and metrics (numbers rounded)."""
    assert c.outcome is not None
    metrics = {k: _rounded(v) for k, v in sorted(c.outcome.metrics.items())}
    names = sorted(a.name for a in c.outcome.artifacts)
    return repr((names, metrics))


def evidence_found(c: Candidate) -> int:
    """How many of the promised artifacts and metrics the fix's run left."""
    if c.outcome is None:
        return 0
    names = {a.name for a in c.outcome.artifacts}
    return (sum(a in names for a in c.job.expected_artifacts)
            + sum(m in c.outcome.metrics for m in c.job.expected_metrics))


def _rounded(value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value) and value:
        return round(value, 5 - math.floor(math.log10(abs(value))))  # 6 significant digits
    return value


def relevant_facts(job: JobSpec, facts: EnvironmentFacts) -> EnvironmentFacts:
    """The interpreter's facts cut to the packages ``job`` imports or requires.

    What a debugger needs, at a fraction of the tokens, and the same on every machine that
    has those packages at those versions (so a recording answers a re-run elsewhere).
    """
    wanted = {_normal(name) for name in imported_modules(job.source or job.code or "")}
    wanted |= {_normal(re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0])
               for req in job.requirements}
    return facts.model_copy(update={"packages": {
        name: version for name, version in facts.packages.items() if _normal(name) in wanted}})


def imported_modules(source: str) -> set[str]:
    """Top-level names of the modules ``source`` imports (none if it does not parse)."""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
