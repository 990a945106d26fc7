"""Parameters and contrast: what the successes had that the failures did not.

Each argument of the most common successful job becomes a typed parameter: a data file, a
number whose observed range is bounded where every failure lay beyond it (and opened up where
nothing failed), a boolean, an enumeration of the few texts that succeeded, or free text. The
contrast text says which values failed and why, which job changes led to successes, and, when
the data cannot tell, that it cannot.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from typing import Any, get_args

from skills.extract.cases import Case, Group, clip, most_common
from skills.extract.preconditions import extension
from workflows.contracts.execution import ExecutionOutcomeKind
from workflows.contracts.patterns import SkillParameter
from workflows.contracts.plan import Scalar
from workflows.contracts.reflection import PatchChange
from workflows.contracts.skills import TaskOutcome

MAX_ENUM = 8
"""Distinct successful text values up to which an argument becomes an enumeration."""
RECOVERY_PHASES = frozenset({"debug", "execution_retry", "verification_retry", "approval_retry"})
"""Task phases that mean the success needed repair (debugging or reflection)."""

_CAUSE = re.compile(r"\b(" + "|".join(
    k for k in get_args(ExecutionOutcomeKind) if k != "succeeded") + r")\b")
_PARAM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


def generalise(template: Case, group: Group
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


def _parameter(name: str, value: Scalar, group: Group) -> tuple[SkillParameter, str] | None:
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
    extensions = sorted({e for v in values if (e := extension(v))})[:16]
    shown = "/".join(extensions) or "data"
    return SkillParameter(name=name, type="file_path", target="input",
                          default=most_common(values), extensions=extensions,
                          description=clip(f"a {shown} data file ({len(values)} successful uses)",
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
    default = most_common(values, order=float)
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
    default = most_common(values)
    if kind == "string" and 2 <= len(distinct) <= MAX_ENUM:
        return SkillParameter(name=name, type="enum", default=default, options=distinct,
                              description=clip("one of " + ", ".join(map(show, distinct))
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


def proven_fixes(ok: list[Case]) -> list[tuple[PatchChange, int]]:
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


def fix_text(fix: PatchChange, n: int) -> str:
    """``args.batch_size 64 → 32 led to 4 successes (why)``."""
    why = f" ({fix.reason})" if fix.reason else ""
    return (f"{fix.field} {show(fix.old_value)} → {show(fix.new_value)} led to "
            f"{n} success{'es' if n != 1 else ''}{why}")


def needed_repair(outcome: TaskOutcome) -> bool:
    """Whether a success needed repair: job fixes, or a debugging or reflection step."""
    return bool(outcome.fixes) or any(
        s.phase in RECOVERY_PHASES or "debug" in s.agent.lower() or "reflect" in s.agent.lower()
        for s in outcome.steps)


def contrast_text(group: Group, template: Case, notes: list[str],
                  fixes: list[tuple[PatchChange, int]]) -> str:
    """Why the successes succeeded and the failures failed, as far as the data tells."""
    lines = list(notes)
    lines.extend(fix_text(fix, n) for fix, n in fixes[:8])
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
