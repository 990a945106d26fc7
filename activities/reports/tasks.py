"""One task in the Markdown report: what it did, how it went, what it left behind.

Numbers go through :mod:`activities.reports.numbers`; artifacts copied into the run's folder
are linked (images embedded, findings texts inlined); a task that failed shows the tail of
what its job printed to stderr. The run's isolation is in the header, not repeated here.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from packaging.utils import canonicalize_name

from activities.reports.numbers import duration, value
from workflows.contracts.environments import PreparedEnvironment, package_name
from workflows.contracts.execution import CheckResult
from workflows.contracts.results import KeptArtifact, TaskResult

TRACEBACK_LINES, TRACEBACK_CHARS = 20, 2000
"""The most of a failed job's stderr the report shows (its last lines)."""
METRICS_SHOWN = 12
_JOB_IDENTITY = re.compile(r"(as uid \d+|in cgroup \S+)$")


def one_line(text: str) -> str:
    """``text`` on one line (runs of whitespace and line ends become one space)."""
    return " ".join(text.split())


def quoted(text: str) -> list[str]:
    """Text as a Markdown block quote, so its own markup cannot break the report's layout."""
    return [f"> {line}".rstrip() for line in text.splitlines()]


def fenced(text: str, lang: str = "text") -> list[str]:
    """Text in a code fence longer than any run of backticks inside it."""
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{lang}", *text.splitlines(), fence]


def link(text: str, path: str) -> str:
    """A Markdown link to a file of the run's folder (its path percent-encoded)."""
    label = text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return f"[{label}]({quote(path)})"


def task_seconds(task: TaskResult) -> float | None:
    """How long the task took, start to end (None: its times are unknown)."""
    if task.started_at is None or task.finished_at is None:
        return None
    return (task.finished_at - task.started_at).total_seconds()


def isolation_parts(tasks: list[TaskResult], task_id: str = "") -> tuple[str | None, str]:
    """The isolation every task that ran shares, and what is particular to ``task_id``.

    An isolation description is a list of clauses (``; ``); the clauses every task shares are
    the run's (None: no task ran), the others the task's own. Clauses naming one job's
    identity (its uid, its cgroup) are left out: each job has its own.
    """
    described = {t.task_id: _clauses(t.execution.isolation)
                 for t in tasks if t.execution is not None}
    if not described:
        return None, ""
    first = next(iter(described.values()))
    shared = [c for c in first if all(c in other for other in described.values())]
    own = [c for c in described.get(task_id, []) if c not in shared]
    return "; ".join(shared), "; ".join(own)


def _clauses(isolation: str) -> list[str]:
    parts = [one_line(c) for c in (isolation or "n/a").split(";")]
    return [c for c in parts if c and not _JOB_IDENTITY.match(c)]


def task_section(task: TaskResult, kept: dict[str, KeptArtifact], *,
                 isolation: str = "") -> list[str]:
    """The report's section on ``task``.

    Args:
        task: the task's whole result.
        kept: its artifacts' copies in the run's folder, by name.
        isolation: what of its isolation differs from the run's (empty: nothing).
    """
    prov = task.provenance
    seconds = task_seconds(task)
    lines = [
        f"### Task {task.task_id} [{task.priority}] — {task.status}",
        "",
        f"{task.action}",
        "",
        f"- Reason: {task.status_reason}",
        f"- Job by: {prov.job_author}"
        + (f"; memory rules {', '.join(prov.memory_rules)}" if prov.memory_rules else ""),
        f"- Attempts: review {prov.approval.attempts}, execution {prov.execution.attempts}, "
        f"verification {prov.verification.attempts}"
        + (f"; took {duration(seconds)}" if seconds is not None else ""),
    ]
    if task.execution is not None:
        lines.append(f"- Run: {task.execution.outcome} in {duration(task.execution.duration_s)}"
                     f", peak memory {task.execution.peak_memory_mb:.0f} MB")
    lines += _environment(prov.environment)
    if isolation:
        lines.append(f"- Isolation of this task: {isolation}")
    lines += _reviews(task)
    if task.metrics:
        shown = ", ".join(f"`{k}` = {value(v)}"
                          for k, v in sorted(task.metrics.items())[:METRICS_SHOWN])
        more = len(task.metrics) - METRICS_SHOWN
        lines.append(f"- Metrics: {shown}" + (f" (and {more} more)" if more > 0 else ""))
    lines += [f"- Check `{check.check.describe()}`: {_check_mark(check)}" for check in task.checks]
    lines += _artifacts(task, kept)
    if task.omitted:
        where = f"`{task.detail}`, which" if task.detail else "the file the task wrote, which"
        lines.append(f"- Cut from the task's result ({'; '.join(task.omitted)}): "
                     f"{where} this report could not read, and the task's events have the rest")
    lines += _traceback(task)
    return [*lines, ""]


PINS_SHOWN = 12
"""Resolved packages named in a task's environment line; the results JSON has them all."""


def _environment(env: PreparedEnvironment | None) -> list[str]:
    """``- Environment: science + seaborn@1a2b… (Python 3.11; 24 packages: …)``; nothing for base.

    The packages the job added to the named set come first, then the ones the set asks for,
    then their dependencies, so what was asked for is never among the ``and N more``.
    """
    if env is None or not env.provisioned:
        return []
    added = {canonicalize_name(package_name(r)) for r in env.added}
    asked = {canonicalize_name(package_name(r)) for r in env.requirements}

    def order(pin: str) -> tuple[bool, bool, str]:
        name = canonicalize_name(package_name(pin))
        return name not in added, name not in asked, pin

    pins = sorted(env.pins, key=order)
    shown = ", ".join(f"`{pin}`" for pin in pins[:PINS_SHOWN])
    more = f", and {len(pins) - PINS_SHOWN} more" if len(pins) > PINS_SHOWN else ""
    how = "reused" if env.reused else f"installed in {duration(env.install_s)}"
    python = f"Python {env.python}; " if env.python else ""
    return [f"- Environment: `{env.title()}` ({python}{how}; {len(pins)} packages: "
            f"{shown}{more})"]


def _reviews(task: TaskResult) -> list[str]:
    lines: list[str] = []
    for verdict in task.verdicts:
        flags = "; ".join(f.message for f in verdict.critical) or "no critical flags"
        lines.append(f"- Review {verdict.reviewer}: {verdict.verdict} "
                     f"({verdict.confidence:.2f}) — {flags}")
    for note in task.reflections:
        lines.append(f"- Reflection `{note.note_id}`: {note.root_cause} → {note.likely_fix} "
                     f"(confidence {note.confidence:.2f}, {note.decision})")
    for patch in task.provenance.patches:
        changes = ", ".join(f"`{c.field}` {c.old_value!r} → {c.new_value!r}" for c in patch.changes)
        lines.append(f"- Patch `{patch.patch_id}` ({patch.root_cause}; risk {patch.risk:.2f}, "
                     f"confidence {patch.confidence:.2f}): {changes} — {patch.outcome}")
    for gate in task.provenance.approvals:
        lines.append(f"- Gate {gate.gate}: {gate.decided_text()}")
    return lines


def _check_mark(check: CheckResult) -> str:
    actual = f" ({check.check.metric} = {value(check.actual)})" if check.actual is not None else ""
    if check.passed:
        return f"pass{actual}"
    return f"FAIL{actual}" if actual and not check.reason.startswith("cannot") \
        else f"FAIL ({check.reason})"


def _artifacts(task: TaskResult, kept: dict[str, KeptArtifact]) -> list[str]:
    lines: list[str] = []
    for artifact in task.artifacts:
        copy = kept.get(artifact.name)
        about = f"({artifact.size:,} bytes, sha256 `{artifact.sha256[:16]}…`)"
        if copy is None:
            lines.append(f"- Artifact `{artifact.name}` {about}: {artifact.path}")
            continue
        lines.append(f"- Artifact {link(artifact.name, copy.path)} {about}")
        if copy.kind == "image":
            lines += ["", f"  !{link(artifact.name, copy.path)}", ""]
        elif copy.kind == "text" and copy.excerpt.strip():
            # fenced, not escaped: shown as written in a terminal and a renderer alike
            # (``<`` stays ``<``), and no renderer reads HTML or markup inside a fence
            lines += ["", *(f"  {line}" for line in fenced(copy.excerpt.rstrip("\n"), ""))]
            if copy.truncated:
                lines.append(f"  > … (truncated; full file: {link(artifact.name, copy.path)})")
            lines.append("")
    unlisted = task.artifact_count() - len(task.artifacts)
    if unlisted > 0:
        lines.append(f"- … and {unlisted} more artifacts, not listed here")
    return lines


def _traceback(task: TaskResult) -> list[str]:
    """The tail of a failed task's stderr, fenced (nothing for a task that completed)."""
    run = task.execution
    if task.status == "completed" or run is None or not run.stderr_tail.strip():
        return []
    tail = run.stderr_tail.rstrip().splitlines()[-TRACEBACK_LINES:]
    text = "\n".join(tail)[-TRACEBACK_CHARS:]
    return ["", "Last lines the job wrote to stderr:", "", *fenced(text)]
