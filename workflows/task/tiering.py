"""Complexity tiers: whether a task takes the light path or the full one.

A *light* task is a quick solver: one model reviewer beside the deterministic ones instead
of three, and no debuggers until its job has failed twice (a first failure reflection cannot
patch escalates it to full: the other model reviewers see the job, which runs once more). A
*full* task is the deep solver: every reviewer, and the debuggers at its first unpatched
failure. The tier is a pure function of the policy, the plan's decision and the job:

- ``tiering: light`` or ``full`` in the run's policy forces every task to that tier;
- otherwise a *heavy* rule makes the task full whatever its label: a job over
  :data:`HEAVY_LINES` lines, one that installs packages (``requirements``), one asking for
  more than :data:`HEAVY_TIMEOUT_S` s, :data:`HEAVY_CPUS` CPUs or :data:`HEAVY_MEMORY_MB`
  MB, inputs over :data:`HEAVY_DATA_BYTES` bytes, or a task with branches;
- then the label (the plan's ``complexity``, or the planner's) decides: ``full`` stays full,
  ``light`` stays light (so a label can raise a task to full, and can lower only what the
  *sizing* rules below would call full, never what a heavy rule does);
- with no label, a *sizing* rule makes the task full: a job over :data:`LIGHT_LINES` lines or
  whose source is not known, more than :data:`LIGHT_IMPORTS` modules imported from outside the
  standard library, inputs over :data:`LIGHT_DATA_BYTES` bytes, more than
  :data:`LIGHT_DEPENDENCIES` dependencies, or a task that is a study hypothesis's evidence;
  and a task no rule names is light.

Deterministic (no I/O): it runs in the TaskWorkflow, once the job to review is known.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field

from workflows.contracts.plan import Complexity, Decision, JobSpec
from workflows.contracts.policy import Tiering
from workflows.contracts.pysource import parse_python

HEAVY_LINES = 300
HEAVY_TIMEOUT_S = 3600.0
HEAVY_CPUS = 2.0
HEAVY_MEMORY_MB = 4096
HEAVY_DATA_BYTES = 100 * 1024 * 1024
LIGHT_LINES = 80
LIGHT_IMPORTS = 3
LIGHT_DATA_BYTES = 10 * 1024 * 1024
LIGHT_DEPENDENCIES = 2

LIGHT_REVIEWER = "quality_safety"
"""The one deterministic reviewer whose model reviewer a light task keeps (it reads the code)."""


@dataclass(frozen=True)
class Classification:
    """A task's tier and why.

    Attributes:
        tier: ``light`` or ``full``.
        by: what decided: ``policy``, ``label`` or ``rules``.
        reasons: the rules that made the task full (empty for a light task).
    """

    tier: Complexity
    by: str
    reasons: list[str] = field(default_factory=list[str])


def classify(mode: Tiering, decision: Decision, job: JobSpec | None) -> Classification:
    """The tier of the task ``decision`` running ``job``, under the policy's ``mode``."""
    if mode != "auto":
        return Classification(mode, "policy")
    heavy = heavy_reasons(decision, job)
    if heavy:
        return Classification("full", "rules", heavy)
    if decision.complexity is not None:
        return Classification(decision.complexity, "label")
    sizing = sizing_reasons(decision, job)
    return Classification("full" if sizing else "light", "rules", sizing)


def heavy_reasons(decision: Decision, job: JobSpec | None) -> list[str]:
    """The heavy rules the task meets (each makes it full, whatever its label)."""
    reasons: list[str] = []
    if job is not None:
        lines = source_lines(job)
        if lines > HEAVY_LINES:
            reasons.append(f"job of {lines} lines > {HEAVY_LINES}")
        if job.requirements:
            reasons.append(f"job installs {len(job.requirements)} requirement(s)")
        res = job.resources
        if res.timeout_s > HEAVY_TIMEOUT_S:
            reasons.append(f"timeout {res.timeout_s:g} s > {HEAVY_TIMEOUT_S:g} s")
        if res.cpus > HEAVY_CPUS:
            reasons.append(f"{res.cpus:g} CPUs > {HEAVY_CPUS:g}")
        if res.memory_mb > HEAVY_MEMORY_MB:
            reasons.append(f"memory {res.memory_mb} MB > {HEAVY_MEMORY_MB} MB")
    size = data_bytes(decision)
    if size > HEAVY_DATA_BYTES:
        reasons.append(f"inputs of {size} bytes > {HEAVY_DATA_BYTES}")
    if decision.branches:
        reasons.append(f"{len(decision.branches)} branch(es) explored")
    return reasons


def sizing_reasons(decision: Decision, job: JobSpec | None) -> list[str]:
    """The sizing rules the task meets (each makes an unlabelled task full)."""
    reasons: list[str] = []
    if job is None or job.source is None:
        reasons.append("job source not known")
    else:
        lines = source_lines(job)
        if lines > LIGHT_LINES:
            reasons.append(f"job of {lines} lines > {LIGHT_LINES}")
        imported = outside_imports(job.source)
        if len(imported) > LIGHT_IMPORTS:
            reasons.append(f"imports {len(imported)} modules outside the standard library "
                           f"> {LIGHT_IMPORTS} ({', '.join(imported)})")
    size = data_bytes(decision)
    if size > LIGHT_DATA_BYTES:
        reasons.append(f"inputs of {size} bytes > {LIGHT_DATA_BYTES}")
    if len(decision.dependencies) > LIGHT_DEPENDENCIES:
        reasons.append(f"{len(decision.dependencies)} dependencies > {LIGHT_DEPENDENCIES}")
    if decision.hypothesis is not None:
        reasons.append(f"evidence for hypothesis {decision.hypothesis}")
    return reasons


def source_lines(job: JobSpec) -> int:
    """Non-blank lines of the job's source (0 when it has none)."""
    return sum(1 for line in (job.source or "").splitlines() if line.strip())


def data_bytes(decision: Decision) -> int:
    """Bytes of the task's resolved inputs."""
    return sum(f.size for f in decision.resolved_inputs)


def outside_imports(source: str) -> list[str]:
    """Top-level modules ``source`` imports from outside the standard library, sorted.

    Source that does not parse counts as importing nothing (the reviewers refuse it anyway).
    """
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return []
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return sorted(n for n in names if n not in sys.stdlib_module_names)
