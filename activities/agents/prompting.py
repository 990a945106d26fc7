"""The agent roles' prompts: system prompts from files, and the pieces of user messages.

System prompts live in ``activities/agents/prompts/*.md``, one per role: a role's stable
instructions, the prefix the gateway marks for prompt caching. The user message carries the
facts. Both are rendered deterministically: the same request gives byte-identical text, so
a recording answers a re-run. Nothing here puts a run id, a time, a duration or an absolute
path into a prompt; ``scrub`` takes out the ones that job output carries (the sandbox's
working directory, the interpreter's install prefix).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources

from workflows.common.canonical import canonical_json
from workflows.common.cuts import keep
from workflows.contracts.environments import BASE
from workflows.contracts.execution import ExecutionOutcome
from workflows.contracts.plan import Check, InputFile, JobSpec
from workflows.contracts.roles import DATA_HEAD_CHARS, MAX_CODE_CHARS, EnvironmentFacts

PROMPTS_PACKAGE = "activities.agents"
PROMPTS_DIR = "prompts"
MAX_PACKAGES_SHOWN = 400
STDERR_CHARS = 4000
"""How much of a failed job's stderr a role reads: its last characters, where errors are."""
MIN_RUN_ID_CHARS = 8
"""Shorter ids are not scrubbed: they could be ordinary words of the text."""
SITE_PACKAGES = re.compile(r"/[^\s\"':]*?/(?:site|dist)-packages/")
STDLIB = re.compile(r"/[^\s\"':]*?/lib/python3\.\d+/")


@functools.cache
def prompt_text(name: str) -> str:
    """The text of ``prompts/<name>.md``, read once per process.

    Raises:
        FileNotFoundError: no such prompt ships with the package.
    """
    path = resources.files(PROMPTS_PACKAGE).joinpath(PROMPTS_DIR, f"{name}.md")
    return path.read_text(encoding="utf-8").strip()


def system_prompt(name: str, *shared: str) -> str:
    """A role's system prompt: its own file, then shared ones (e.g. how a job runs)."""
    return "\n\n".join(prompt_text(n) for n in (name, *shared)) + "\n"


def message(*sections: str) -> str:
    """A user message from its sections, in order."""
    return "\n\n".join(s for s in sections if s) + "\n"


def section(title: str, body: str) -> str:
    """A titled section; ``(none)`` when empty, so a missing fact is visible."""
    return f"## {title}\n\n{body.strip() or '(none)'}"


def bullets(items: Iterable[str]) -> str:
    """One ``- item`` line each."""
    return "\n".join(f"- {item}" for item in items)


def fenced(text: str, lang: str = "") -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def head(text: str, limit: int) -> str:
    """The first ``limit`` characters, saying how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters cut ...]"


def tail(text: str, limit: int) -> str:
    """The last ``limit`` characters, saying how many were cut."""
    if len(text) <= limit:
        return text
    return f"[... {len(text) - limit} earlier characters cut ...]\n{text[-limit:]}"


def scrub(text: str, *, workspace: str = "", run_id: str = "") -> str:
    """``text`` without the paths and ids that differ between runs or machines.

    The working directory becomes ``.``, and so does any other directory of the run (another
    attempt's, a diagnostic's); the run id becomes ``<run>``; the interpreter's install
    prefix becomes ``<site-packages>/`` or ``<stdlib>/``, keeping the package and file a
    traceback points at.
    """
    if workspace and workspace != "/":
        text = text.replace(workspace.rstrip("/"), ".")
    if len(run_id) >= MIN_RUN_ID_CHARS:
        run_dir = r"(?:/[^/\s\"':]+)*/" + re.escape(run_id) + r"(?![\w.-])"
        text = re.sub(run_dir + r"(?:/[^/\s\"':]+){0,2}", ".", text)
        text = text.replace(run_id, "<run>")
    text = SITE_PACKAGES.sub("<site-packages>/", text)
    return STDLIB.sub("<stdlib>/", text)


def failure_facts(outcome: ExecutionOutcome, run_id: str) -> list[str]:
    """How a job failed: its classified outcome, exit status, signal and the sandbox's reason."""
    reason = scrub(outcome.reason, workspace=outcome.workspace, run_id=run_id)
    return [f"outcome: {outcome.outcome}",
            f"exit code: {outcome.exit_code if outcome.exit_code is not None else 'none'}",
            f"signal: {outcome.signal if outcome.signal is not None else 'none'}",
            f"reason: {reason or '(none)'}"]


def stderr_text(outcome: ExecutionOutcome, run_id: str) -> str:
    """A failed job's stderr: its tail, bounded, paths made relative, fenced."""
    return fenced(scrub(tail(outcome.stderr_tail, STDERR_CHARS), workspace=outcome.workspace,
                        run_id=run_id))


def checks_text(checks: Iterable[Check]) -> str:
    """Machine-checked criteria, one per line (``p_value < 0.05``)."""
    return bullets(c.describe() for c in checks)


def data_text(files: Iterable[InputFile]) -> str:
    """Data files by name and size, with their first lines where given (never their path).

    A file longer than its preview shows its whole first lines only, and says how many
    lines that is and how many of its bytes are left out (its profile has the rest).
    """
    parts: list[str] = []
    for f in files:
        line = f"### {f.name} ({f.size} bytes)"
        first = head(getattr(f, "head", ""), DATA_HEAD_CHARS)
        shown = len(first.encode())
        if first and shown < f.size:
            first = first[:first.rfind("\n")] if "\n" in first else first
            rows = first.count("\n") + 1
            left = f.size - len(first.encode())
            first += (f"\n[first {rows} line{'s' if rows != 1 else ''} shown; the other "
                      f"{left:,} bytes are left out: the data profile describes the whole file]")
        parts.append(f"{line}\n\n{fenced(first)}" if first else line)
    return "\n\n".join(parts)


def profiles_section(profiles: Mapping[str, str] | None) -> str:
    """The data files' profiles, each fenced; no section at all when none was read.

    Each profile is bounded on its own and says itself what it cut (``activities.profiles``).
    """
    if not profiles:
        return ""
    return section("Data profiles (read from each whole file; a cut profile says so)",
                   "\n\n".join(fenced(text) for text in profiles.values()))


def environment_text(facts: EnvironmentFacts | None) -> str:
    """The job interpreter's Python version and installed distributions."""
    if facts is None:
        return ""
    names, cut = keep(sorted(facts.packages, key=str.lower), MAX_PACKAGES_SHOWN,
                      what="package", name=str)
    shown = ", ".join(f"{n}=={facts.packages[n]}" for n in names)
    more = f" {cut}" if cut else ""
    text = f"Python {facts.python or 'unknown'}\n\nInstalled: {shown or '(none)'}{more}"
    if facts.environment:
        text = (f"The job runs in the environment {facts.environment}.\n\n{text}\n\n"
                "A job may ask for more packages by adding them to `requirements` (names "
                "with version specifiers): they are resolved, reviewed and installed into "
                "the job's environment before it runs.")
    return text


UNKNOWN_PACKAGES = (
    "The packages of the job's environment are not known here (none are listed). Import the "
    "standard library and what the task needs, and list every third-party package the job "
    "imports in `requirements` (names with version specifiers): they are resolved, reviewed "
    "and installed into the job's environment before it runs.")
"""What the coder reads when no environment's packages were probed (fast mode, base)."""


def sandbox_text(facts: EnvironmentFacts | None) -> str:
    """The coder's environment: its packages with versions, or that none are known."""
    return environment_text(facts) if facts is not None else UNKNOWN_PACKAGES


def named_text(environments: Sequence[str], known: bool = True) -> str:
    """The named environments a job may ask for in ``environment`` ("" when none is known).

    ``known``: whether the run's environment's packages are shown above (the sentence says
    so only when they are).
    """
    if not environments:
        return ""
    named = ", ".join(f"`{n}`" for n in environments if n != BASE)
    packages = ("its packages are listed above" if known else
                "its packages are not known here")
    return (f"Environments a job may name in `environment`: {named}, or `{BASE}` (the "
            "worker's own interpreter). Name one only when the job needs what it has; a job "
            f"naming none runs in the run's environment ({packages}).")


def job_text(job: JobSpec) -> str:
    """A job as a reviewer or debugger sees it: its settings, then its code."""
    resources_ = job.resources
    settings = bullets([
        f"filename: {job.filename or 'job.py'}",
        f"args: {canonical_json(job.args, spaced=True)}",
        f"expected_artifacts: {canonical_json(job.expected_artifacts, spaced=True)}",
        f"expected_metrics: {canonical_json(job.expected_metrics, spaced=True)}",
        f"resources: memory_mb={resources_.memory_mb}, timeout_s={resources_.timeout_s:g}, "
        f"cpus={resources_.cpus:g}",
        f"requirements: {canonical_json(job.requirements, spaced=True)}",
        *([f"environment: {job.environment}"] if job.environment else []),
    ])
    code = job.source or job.code or ""
    return f"{settings}\n\n{fenced(head(code, MAX_CODE_CHARS), 'python')}"
