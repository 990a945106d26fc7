"""Deterministic extraction of skill and subagent patterns from a batch of finished tasks.

Every ``EXTRACT_EVERY`` outcomes the library contrasts the batch's successes with its failures
(seed 003 §3.4) and generalises the jobs that worked into typed templates (seed 000 §4.3):
arguments become parameters with ranges the failures bound, the job's imports and data types
become preconditions, and a kind of work that only succeeded after repairs becomes a subagent
whose memory is the repairs that worked. No model, database or vector store is involved: the
same batch and library give the same patterns, so the activity storing them can be retried.

The text made here (description, context, contrast) is computed from the data; a model may
later rewrite the prose, never the numbers.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar, get_args

from workflows.contracts.execution import ExecutionOutcomeKind
from workflows.contracts.executive import PatchChange
from workflows.contracts.memory import task_type
from workflows.contracts.plan import Check, JobSpec, Scalar
from workflows.library.patterns import (
    EXTRACT_EVERY,
    MAX_DESCRIPTION,
    Preconditions,
    Skill,
    SkillMetrics,
    SkillParameter,
    SkillPattern,
    SkillSignature,
    SkillStatus,
    SkillStep,
    TaskOutcome,
    name_problem,
    slug,
)

SUCCESS = "completed"
"""The one outcome status that counts as a success."""
NEUTRAL = frozenset({"pending", "running", "blocked", "deferred", "cancelled"})
"""Statuses that say nothing about whether the job works: neither success nor failure."""
MIN_SUCCESSES = 3
"""Successful tasks a group needs before it yields a pattern."""
MAX_ENUM = 8
"""Distinct successful text values up to which an argument becomes an enumeration."""
MAX_SOURCE_RUNS = 200
RECOVERY_PHASES = frozenset({"debug", "execution_retry", "verification_retry", "approval_retry"})
"""Task phases that mean the success needed repair (debugging or reflection)."""

_CAUSE = re.compile(r"\b(" + "|".join(
    k for k in get_args(ExecutionOutcomeKind) if k != "succeeded") + r")\b")
_PARAM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
_TOKEN = re.compile(r"[a-z][a-z0-9]+")
_H = TypeVar("_H", bound=Hashable)


@dataclass
class Extraction:
    """What one batch yields: new patterns, new versions, grown patterns and why not more."""

    new: list[Skill] = field(default_factory=list[Skill])
    """New patterns: ``candidate``, or ``active`` when confident enough to approve alone."""
    versions: list[Skill] = field(default_factory=list[Skill])
    """New versions of an existing family (always ``candidate``)."""
    updated: list[Skill] = field(default_factory=list[Skill])
    """Existing patterns whose job the batch ran again: evidence and source runs grown."""
    skipped: list[str] = field(default_factory=list[str])
    """Why a group of outcomes yielded nothing, one sentence each."""


@dataclass(frozen=True)
class _Case:
    """One outcome with a resolved job."""

    outcome: TaskOutcome
    job: JobSpec
    source: str
    sha: str
    task_type: str

    @property
    def ok(self) -> bool:
        return self.outcome.status == SUCCESS

    def arg(self, name: str) -> Scalar | None:
        return self.job.args.get(name)


@dataclass(frozen=True)
class _Group:
    """The outcomes of one task type and job file, with the same type's failures elsewhere."""

    task_type: str
    filename: str
    ok: list[_Case]
    bad: list[_Case]
    pool: list[_Case]
    """Failures of the same task type in the whole batch (contrast for the arguments)."""

    @property
    def label(self) -> str:
        return f"{self.task_type} ({self.filename or 'inline job'})"

    @property
    def ratio(self) -> float:
        return len(self.ok) / (len(self.ok) + len(self.bad))


@dataclass(frozen=True)
class _Draft:
    """A pattern built from one group, before the library decides where it goes."""

    group: _Group
    pattern: SkillPattern
    sha: str

    @property
    def confidence(self) -> float:
        return confidence(len(self.group.ok), len(self.group.bad))


def confidence(successes: int, failures: int) -> float:
    """An extraction's confidence: success ratio times support, in [0, 1].

    Support is ``min(1, successes / EXTRACT_EVERY)``: a pattern seen succeed a whole batch's
    worth of times is fully supported, three successes only 0.3 of it. Ten clean successes give
    1.0; seven successes and three failures give 0.49.
    """
    total = successes + failures
    if total == 0:
        return 0.0
    return round(successes / total * min(1.0, successes / EXTRACT_EVERY), 4)


def extract(outcomes: Sequence[TaskOutcome], existing: Sequence[Skill], *, now: datetime,
            auto_approve: float = 1.01) -> Extraction:
    """Extract patterns from a batch of outcomes, against the library's existing patterns.

    Outcomes are grouped by task type and job file; a group with at least ``MIN_SUCCESSES``
    successes yields one pattern (one per task type: the best-supported group). A pattern of a
    known family either grows the version with the same job (``updated``) or becomes a new
    candidate version when it does at least as well as the active one.

    Args:
        outcomes: the batch (a repeated ``run_id/task_id`` counts once, the later one).
        existing: every pattern of the library, retired ones included (version numbers).
        now: the time stamped on new and grown patterns.
        auto_approve: new patterns at least this confident start ``active`` (>1: never).

    Raises:
        ValueError: ``auto_approve`` outside [0, 1.01].
    """
    if not 0 <= auto_approve <= 1.01:
        raise ValueError(f"auto_approve is {auto_approve!r}; it must be within [0, 1.01]")
    result = Extraction()
    cases, ignored = _cases(outcomes)
    if ignored:
        result.skipped.append(f"{ignored} outcome(s) had no resolved job (no source) and were "
                              "not considered")
    drafts: dict[str, list[_Draft]] = {}
    for group in _groups(cases):
        draft = _draft(group)
        if isinstance(draft, str):
            result.skipped.append(draft)
        else:
            drafts.setdefault(draft.pattern.name, []).append(draft)
    for name in sorted(drafts):
        best, *rest = sorted(drafts[name], key=lambda d: (-len(d.group.ok), -d.group.ratio,
                                                          d.group.filename))
        result.skipped.extend(
            f"{d.group.label}: {len(d.group.ok)} successes, but {best.group.label} of the same "
            "task type had more support; one pattern per task type and batch" for d in rest)
        _place(best, existing, result, now=now, auto_approve=auto_approve)
    for skills in (result.new, result.versions, result.updated):
        skills.sort(key=lambda s: (s.pattern.name, s.pattern.version))
    return result


def _cases(outcomes: Sequence[TaskOutcome]) -> tuple[list[_Case], int]:
    latest = {o.key: o for o in outcomes}
    cases: list[_Case] = []
    ignored = 0
    for key in sorted(latest):
        o = latest[key]
        if o.status in NEUTRAL:
            continue
        if o.job is None or o.job.source is None:
            ignored += 1
            continue
        cases.append(_Case(o, o.job, o.job.source, _sha(o.job.source), task_type(o.action)))
    return cases, ignored


def _groups(cases: list[_Case]) -> list[_Group]:
    keyed: dict[tuple[str, str], list[_Case]] = {}
    for case in cases:
        keyed.setdefault((case.task_type, case.job.filename or ""), []).append(case)
    return [_Group(ttype, filename, [c for c in group if c.ok], [c for c in group if not c.ok],
                   [c for c in cases if c.task_type == ttype and not c.ok])
            for (ttype, filename), group in sorted(keyed.items())]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# --- one group -> one pattern --------------------------------------------------------------


def _draft(group: _Group) -> _Draft | str:
    """The pattern a group yields, or why it yields none."""
    total = len(group.ok) + len(group.bad)
    if len(group.ok) < MIN_SUCCESSES:
        return (f"{group.label}: {len(group.ok)} successful of {total} outcome(s); a pattern "
                f"needs at least {MIN_SUCCESSES} successes")
    template = _most_common_case(group.ok)
    imports = _imports(template.source)
    if isinstance(imports, str):
        return f"{group.label}: the job source {imports}; nothing to generalise"
    name = slug(group.task_type)
    if (problem := name_problem(name)) is not None:
        return f"{group.label}: {problem}"
    parameters, args, notes = _generalise(template, group)
    job = template.job.model_copy(update={"args": args})
    fixes = _fixes(group.ok)
    recovered = sum(1 for c in group.ok if _recovered(c.outcome))
    kind = "subagent" if 2 * recovered >= len(group.ok) else "skill"
    contrast = _contrast(group, template, notes, fixes)
    pattern = SkillPattern(
        name=name, kind=kind, version=1,
        description=_clip(_description(group, job, parameters), MAX_DESCRIPTION),
        context=_clip(_context(group, job), 4000),
        guideline=_clip(_guideline(kind, group, job, parameters, fixes, contrast), 20_000),
        action=_clip(_action(group.ok, parameters), 4000),
        acceptance_criteria=list(_most_common(
            tuple(c.outcome.acceptance_criteria) for c in group.ok))[:32],
        signature=SkillSignature(keywords=_keywords(group), input_types=_input_types(group.ok),
                                 output_types=_output_types(job)),
        preconditions=Preconditions(input_types=_input_types(group.ok, every=True),
                                    imports=imports[:64], keywords=_keywords(group)),
        parameters=parameters, steps=_steps(group.ok), job=job, checks=_checks(group.ok),
        recovery=[fix for fix, _ in fixes][:16] if kind == "subagent" else [],
        contrast=_clip(contrast, 4000), tags=sorted({kind, *_input_types(group.ok)})[:32],
        source_runs=_bounded(sorted({c.outcome.run_id for c in group.ok + group.bad})))
    return _Draft(group, pattern, template.sha)


def _most_common(items: Iterable[_H], *, order: Callable[[_H], Any] = repr) -> _H:
    """The most frequent item; ties go to the smallest by ``order`` (deterministic)."""
    counts = Counter(items)
    return min(counts, key=lambda item: (-counts[item], order(item)))


def _most_common_case(cases: list[_Case]) -> _Case:
    """The first case (by key) of the most common job source."""
    sha = _most_common(c.sha for c in cases)
    return next(c for c in cases if c.sha == sha)


def _imports(source: str) -> list[str] | str:
    """Top-level modules the source imports, outside the standard library; or why not."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return f"does not parse (line {exc.lineno}: {exc.msg})"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"does not parse ({type(exc).__name__}: {str(exc)[:200]})"
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return sorted(n for n in names if n not in sys.stdlib_module_names and n != "__future__")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _bounded(runs: list[str]) -> list[str]:
    return runs[-MAX_SOURCE_RUNS:]


# --- parameters and contrast ---------------------------------------------------------------


def _generalise(template: _Case, group: _Group
                ) -> tuple[list[SkillParameter], dict[str, Scalar], list[str]]:
    """Typed parameters for the template's arguments, the template's args and contrast notes.

    An argument whose name cannot be a parameter name, or beyond the 32nd, stays fixed.
    """
    parameters: list[SkillParameter] = []
    args = dict(template.job.args)
    notes: list[str] = []
    for name in sorted(template.job.args):
        if len(parameters) == 32 or not _PARAM_NAME.match(name):
            continue
        built = _parameter(name, template.job.args[name], group)
        if built is None:
            continue
        parameter, note = built
        parameters.append(parameter)
        if parameter.default is not None:
            args[name] = parameter.default
        if note:
            notes.append(note)
    return parameters, args, notes


def _parameter(name: str, value: Scalar, group: _Group) -> tuple[SkillParameter, str] | None:
    raw = [c.arg(name) for c in group.ok]
    failed = [(v, _cause(c.outcome)) for c in group.pool if (v := c.arg(name)) is not None]
    if isinstance(value, str) and any(c.arg(name) in c.outcome.input_names for c in group.ok):
        return _file(name, [v for v in raw if isinstance(v, str)])
    if isinstance(value, bool):
        return _choice(name, "boolean", [v for v in raw if isinstance(v, bool)], failed)
    if isinstance(value, int | float):
        numbers = [v for v in raw if isinstance(v, int | float) and not isinstance(v, bool)
                   and math.isfinite(v)]
        return _numeric(name, numbers, failed) if numbers else None
    return _choice(name, "string", [v for v in raw if isinstance(v, str)], failed)


def _finite(value: Scalar | None) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value))


def _file(name: str, values: list[str]) -> tuple[SkillParameter, str]:
    extensions = sorted({e for v in values if (e := _extension(v))})[:16]
    shown = "/".join(extensions) or "data"
    return SkillParameter(name=name, type="file_path", target="input",
                          default=_most_common(values), extensions=extensions,
                          description=_clip(f"a {shown} data file ({len(values)} successful uses)",
                                            500)), ""


def _numeric(name: str, values: list[int | float], failed: list[tuple[Scalar, str]]
             ) -> tuple[SkillParameter, str]:
    """A number with the observed range, bounded where every failure lay beyond it."""
    numbers = [float(v) for v in values]
    integer = all(isinstance(v, int) for v in values)
    low, high = min(numbers), max(numbers)
    minimum, maximum = _widen(low, high, integer=integer)
    bad = [(v, cause) for v, cause in failed if _finite(v)]
    note = ""
    if bad and all(float(v) > high for v, _ in bad):
        maximum = high
        note = f"{name} ≤ {show(high)} in {len(values)} successes; {_failures(bad)}"
    elif bad and all(float(v) < low for v, _ in bad):
        minimum = low
        note = f"{name} ≥ {show(low)} in {len(values)} successes; {_failures(bad)}"
    default = _most_common(values, order=float)
    kind = "integer" if integer else "number"
    return SkillParameter(
        name=name, type=kind, default=default, minimum=minimum, maximum=maximum,
        description=(f"{kind} from {show(minimum)} to {show(maximum)}; succeeded with "
                     f"{show(low)}..{show(high)}")), note


def _widen(low: float, high: float, *, integer: bool) -> tuple[float, float]:
    """The observed range opened up when no failure bounds it: halved below, doubled above.

    Signs are kept (a range of positive values stays positive; an integer one stays ≥ 1).
    """
    minimum = low / 2 if low > 0 else low * 2
    maximum = high * 2 if high > 0 else (high / 2 if high < 0 else max(high - low, 1.0))
    if integer:
        minimum = max(1.0, math.floor(minimum)) if low >= 1 else float(math.floor(minimum))
        maximum = float(math.ceil(maximum))
    return minimum, maximum


def _choice(name: str, kind: str, values: list[Any], failed: list[tuple[Scalar, str]]
            ) -> tuple[SkillParameter, str] | None:
    """A boolean, an enumeration of few observed texts, or free text with a default."""
    if not values:
        return None
    distinct = sorted(set(values))
    bad = [(v, cause) for v, cause in failed if type(v) is type(values[0])]
    note = ""
    if bad and all(v not in distinct for v, _ in bad):
        shown = " or ".join(show(v) for v in distinct[:MAX_ENUM])
        note = f"{name} was {shown} in {len(values)} successes; {_failures(bad)}"
    default = _most_common(values)
    if kind == "string" and 2 <= len(distinct) <= MAX_ENUM:
        return SkillParameter(name=name, type="enum", default=default, options=distinct,
                              description=_clip("one of " + ", ".join(map(show, distinct))
                                                + " (each succeeded)", 500)), note
    typed = "boolean" if kind == "boolean" else "string"
    return SkillParameter(name=name, type=typed, default=default,
                          description=f"{typed}; {show(default)} succeeded most often"[:500]), note


def _failures(bad: list[tuple[Scalar, str]]) -> str:
    """``64 failed 3 times (out_of_memory), 128 failed once (timeout)``."""
    counts = Counter(v for v, _ in bad)
    causes: dict[Scalar, set[str]] = {}
    for value, cause in bad:
        causes.setdefault(value, set()).add(cause)
    parts = [f"{show(v)} failed {_times(counts[v])} ({', '.join(sorted(causes[v]))})"
             for v in sorted(counts, key=_order)]
    return ", ".join(parts)


def _order(value: Scalar) -> tuple[int, float, str]:
    if _finite(value):
        return 0, float(value), ""
    return 1, 0.0, repr(value)


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def show(value: Any) -> str:
    """A value as the contrast text writes it: ``16``, ``0.5``, ``true``, ``'fast'``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        return repr(value[:60])
    return json.dumps(value, sort_keys=True, default=str)[:60]


def _cause(outcome: TaskOutcome) -> str:
    """Why a task failed: its last job run's failure, one named in its steps, else its status."""
    if outcome.failure:
        return outcome.failure
    for text in [*(s.detail for s in reversed(outcome.steps)), outcome.deviation_detail]:
        if found := _CAUSE.search(text):
            return found.group(1)
    return outcome.status


def _fixes(ok: list[_Case]) -> list[tuple[PatchChange, int]]:
    """Distinct job changes that led to successes, with how many successes each led to."""
    counts: Counter[str] = Counter()
    first: dict[str, PatchChange] = {}
    for case in ok:
        keys = {_fix_key(fix): fix for fix in case.outcome.fixes}
        for key, fix in keys.items():
            counts[key] += 1
            first.setdefault(key, fix)
    return [(first[k], counts[k]) for k in sorted(counts, key=lambda k: (-counts[k], k))]


def _fix_key(fix: PatchChange) -> str:
    return json.dumps([fix.field, fix.old_value, fix.new_value], sort_keys=True, default=str)


def _fix_text(fix: PatchChange, n: int) -> str:
    why = f" ({fix.reason})" if fix.reason else ""
    return (f"{fix.field} {show(fix.old_value)} → {show(fix.new_value)} led to "
            f"{n} success{'es' if n != 1 else ''}{why}")


def _recovered(outcome: TaskOutcome) -> bool:
    """Whether a success needed repair: job fixes, or a debugging or reflection step."""
    return bool(outcome.fixes) or any(
        s.phase in RECOVERY_PHASES or "debug" in s.agent.lower() or "reflect" in s.agent.lower()
        for s in outcome.steps)


def _contrast(group: _Group, template: _Case, notes: list[str],
              fixes: list[tuple[PatchChange, int]]) -> str:
    """Why the successes succeeded and the failures failed, as far as the data tells."""
    lines = list(notes)
    lines.extend(_fix_text(fix, n) for fix, n in fixes[:8])
    shas = {c.sha for c in group.ok}
    other = [c for c in group.bad if c.sha not in shas]
    if other:
        lines.append(f"{len(other)} failure(s) ran another version of "
                     f"{template.job.filename or 'the job'} than every success")
    if not lines:
        if group.pool:
            causes = sorted({_cause(c.outcome) for c in group.pool})
            lines.append(f"{len(group.pool)} failure(s) of this task type ({', '.join(causes)}) "
                         "are not explained by their arguments or job; the batch does not say "
                         "why")
        else:
            lines.append(f"no failures of this task type in the batch; {len(group.ok)} "
                         "successes")
    return "\n".join(lines)


# --- the pattern's other fields ------------------------------------------------------------


def _extension(name: str) -> str:
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base.strip(".") else ""


def _input_types(ok: list[_Case], *, every: bool = False) -> list[str]:
    """Extensions of the successes' data inputs: of any (signature) or of every success."""
    sets = [{e for n in c.outcome.input_names if (e := _extension(n))} for c in ok]
    found = sets[0].intersection(*sets[1:]) if every else sets[0].union(*sets[1:])
    return sorted(found)[:16]


def _output_types(job: JobSpec) -> list[str]:
    extensions = {e for a in job.expected_artifacts if (e := _extension(a))}
    return sorted(extensions | set(job.expected_metrics))[:32]


def _keywords(group: _Group) -> list[str]:
    """Significant words in more than half of the group's actions, most frequent first."""
    actions = [c.outcome.action for c in group.ok + group.bad]
    counts: Counter[str] = Counter()
    for action in actions:
        # task_type of a single word is the word itself unless it is a stop word
        counts.update({w for w in _TOKEN.findall(action.lower()) if task_type(w) == w})
    common = [w for w, n in counts.items() if 2 * n > len(actions)]
    return sorted(common, key=lambda w: (-counts[w], w))[:32]


def _action(ok: list[_Case], parameters: list[SkillParameter]) -> str:
    """The most common action, with each file's name replaced by ``{parameter}``."""
    files = [p.name for p in parameters if p.type == "file_path"]
    actions: list[str] = []
    for case in ok:
        action = case.outcome.action
        for name in files:
            value = case.arg(name)
            if isinstance(value, str) and value:
                action = action.replace(value, "{" + name + "}")
        actions.append(action)
    return _most_common(actions)


def _steps(ok: list[_Case]) -> list[SkillStep]:
    sequences = [tuple((s.agent, s.phase, s.detail) for s in c.outcome.steps) for c in ok]
    return [SkillStep(agent=a, phase=p, detail=d) for a, p, d in _most_common(sequences)][:64]


def _checks(ok: list[_Case]) -> list[Check]:
    """The checks every success had (its postconditions)."""
    keyed = [{c.model_dump_json(): c for c in case.outcome.checks} for case in ok]
    common = set(keyed[0]).intersection(*keyed[1:])
    return [keyed[0][k] for k in sorted(common)][:32]


def _description(group: _Group, job: JobSpec, parameters: list[SkillParameter]) -> str:
    inputs = "/".join(_input_types(group.ok)) or "no data file"
    outputs = ", ".join(job.expected_artifacts + job.expected_metrics) or "no declared output"
    names = ", ".join(p.name for p in parameters) or "no parameters"
    return (f"{_most_common(c.outcome.action for c in group.ok)[:300]} — runs "
            f"{job.filename or 'an inline job'} on {inputs} with {names}; produces {outputs}. "
            f"Learnt from {len(group.ok)} successful and {len(group.bad)} failed tasks of type "
            f"{group.task_type}.")


def _context(group: _Group, job: JobSpec) -> str:
    actions = sorted({c.outcome.action[:300] for c in group.ok})[:5]
    goals = sorted({g[:300] for c in group.ok if (g := c.outcome.goal)})[:3]
    runs = {c.outcome.run_id for c in group.ok + group.bad}
    lines = [f"Task type: {group.task_type}.", "Actions: " + "; ".join(actions) + "."]
    if goals:
        lines.append("Goals: " + "; ".join(goals) + ".")
    lines.append("Inputs: " + (", ".join(_input_types(group.ok)) or "none") + ".")
    lines.append("Outputs: " + (", ".join(_output_types(job)) or "none declared") + ".")
    lines.append(f"Evidence: {len(group.ok)} successes, {len(group.bad)} failures in "
                 f"{len(runs)} run(s).")
    return "\n".join(lines)


def _guideline(kind: str, group: _Group, job: JobSpec, parameters: list[SkillParameter],
               fixes: list[tuple[PatchChange, int]], contrast: str) -> str:
    script = job.filename or "the job"
    ranges = [f"- {p.name}: {p.description}" for p in parameters]
    if kind == "subagent":
        tried = [f"- {_fix_text(fix, n)}" for fix, n in fixes[:16]]
        return "\n".join([
            f"You are the specialist for {group.task_type} tasks. Run {script} with the parameters "
            "given; when it fails, apply the change below that matches the failure, most "
            "proven first, one at a time:", *tried,
            "If none applies or none works, stop and report the failure with its evidence.",
            "Parameters:", *ranges])
    return "\n".join([f"Run {script} with parameters inside their ranges:", *ranges,
                      "Why:", contrast])


# --- the library's side: new, new version or grown evidence --------------------------------


def _place(draft: _Draft, existing: Sequence[Skill], result: Extraction, *, now: datetime,
           auto_approve: float) -> None:
    name = draft.pattern.name
    family = [s for s in existing if s.pattern.name == name]
    live = sorted((s for s in family if s.status != "retired"),
                  key=lambda s: -s.pattern.version)
    top = max((s.pattern.version for s in family), default=0)
    if not live:
        result.new.append(_new(draft, version=top + 1, now=now, auto_approve=auto_approve))
        return
    same = next((s for s in live if s.pattern.job is not None
                 and _sha(s.pattern.job.source or "") == draft.sha), None)
    if same is not None:
        result.updated.append(_grown(same, draft, now=now))
        return
    active = next((s for s in live if s.status == "active"), None)
    ratio = round(draft.group.ratio, 4)
    if active is not None and ratio < active.metrics.success_rate:
        result.skipped.append(
            f"{draft.group.label}: a different job succeeded in {ratio:.0%} of the batch, below "
            f"the {active.metrics.success_rate:.0%} of the active {active.skill_id}; no new "
            "version")
        return
    skill = _new(draft, version=top + 1, now=now, auto_approve=2.0)
    bar = "" if active is None else (
        f", at least the active {active.skill_id}'s {active.metrics.success_rate:.0%}")
    result.versions.append(skill.model_copy(update={"note": (
        f"new version of {name}: its job differs from {live[0].skill_id}'s; succeeded in "
        f"{ratio:.0%} of the batch{bar}; awaiting approval")}))


def _new(draft: _Draft, *, version: int, now: datetime, auto_approve: float) -> Skill:
    score = draft.confidence
    group = draft.group
    status: SkillStatus = "active" if score >= auto_approve else "candidate"
    note = (f"approved automatically: confidence {score:.2f} ≥ {auto_approve:.2f}"
            if status == "active" else
            f"extracted with confidence {score:.2f}; awaiting approval")
    return Skill(
        pattern=draft.pattern.model_copy(update={"version": version}), status=status,
        metrics=SkillMetrics(evidence_successes=len(group.ok), evidence_failures=len(group.bad)),
        confidence=score, origin="extracted", note=note, created_at=now, updated_at=now)


def _grown(skill: Skill, draft: _Draft, *, now: datetime) -> Skill:
    """``skill`` with the batch's evidence added and its source runs appended."""
    runs = list(skill.pattern.source_runs)
    runs.extend(r for r in draft.pattern.source_runs if r not in runs)
    metrics = skill.metrics.model_copy(update={
        "evidence_successes": skill.metrics.evidence_successes + len(draft.group.ok),
        "evidence_failures": skill.metrics.evidence_failures + len(draft.group.bad)})
    pattern = skill.pattern.model_copy(update={"source_runs": _bounded(runs)})
    return skill.model_copy(update={"pattern": pattern, "metrics": metrics, "updated_at": now})
