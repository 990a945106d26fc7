"""Numbers in a model-written answer that no verified metric holds, for the report to flag.

A run's answer (the output processor's) and a study's synthesis (the study synthesizer's) are
written by a model; their numbers should come from the verified metrics. :func:`unheld` finds
the numbers of such a text and returns those that no verified number holds. The rule:

- **What counts as a claim.** A number written with a decimal point (``0.49``, ``-0.12``,
  ``1.2e-07``) or as a percentage (``73 %``, ``49.0%``). A whole number without either
  (``cycle 3``, ``442 patients``, ``5-fold``, ``2024``, ``n = 60``) is read as a count, a label
  or a year, not a measured value, and is never flagged. Digits inside a word (``r2``,
  ``cv_r2``, ``t1``) and dotted versions (``1.2.3``) are not numbers.
- **What holds it.** The verified numbers: each metric's value, and for an estimate its
  interval bounds, standard error, level and size; every number inside a list or mapping
  metric; and the numbers the run or study was given (its checks' and criteria's
  thresholds). A written number holds when a verified number rounds to it at the precision
  it is written with (``0.49`` holds 0.4949 but not 0.4951; ``37.5`` holds 37.46).
- **Percentages** hold a verified number either as written (``49 %`` ← 49.0) or as a
  fraction (``49 %`` ← 0.49, at two more decimals).
- **Signs.** A number written with a minus sign (``-``, or U+2212) must match a negative
  verified number; one written without a sign may match either sign, since words often carry
  it ("fell by 0.12").

Pure: no I/O; the report writers give it the text and the verified numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from workflows.contracts.estimates import Estimate
from workflows.contracts.goal import RunAnswer
from workflows.contracts.results import TaskResult

NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-\u2212+])?(?P<digits>\d{1,3}(?:,\d{3})+(?!\d)|\d+)"
    r"(?P<frac>\.\d+)?(?P<exp>[eE][-+]?\d+)?(?![\w]|\.\d)(?P<pct>\s?%)?")
"""A number as an answer writes one: sign, digits (thousands with commas), fraction,
exponent, percent sign; not inside a word and not part of a dotted version."""
EPSILON = 1e-9


def verified_numbers(metrics: Iterable[Any]) -> list[float]:
    """Every number of ``metrics``' values: plain ones, estimates' parts, lists and mappings."""
    found: list[float] = []
    for raw in metrics:
        _collect(raw, found)
    return found


def _collect(raw: Any, found: list[float]) -> None:
    if isinstance(raw, bool) or raw is None:
        return
    if isinstance(raw, int | float):
        if math.isfinite(raw):
            found.append(float(raw))
    elif isinstance(raw, Estimate):
        _collect(raw.model_dump(exclude={"method"}), found)
    elif isinstance(raw, Mapping):
        for item in cast("Mapping[Any, Any]", raw).values():
            _collect(item, found)
    elif isinstance(raw, Sequence) and not isinstance(raw, str):
        for item in cast("Sequence[Any]", raw):
            _collect(item, found)


def unheld(text: str, verified: Iterable[float]) -> list[str]:
    """The numbers ``text`` claims that no number of ``verified`` holds, as written, in order.

    Each is listed once; see the module's rule for what is a claim and what holds one.
    """
    pool = sorted(set(verified))
    flagged: list[str] = []
    for match in NUMBER.finditer(text):
        written = match.group(0).strip()
        if not (match.group("frac") or match.group("exp") or match.group("pct")):
            continue  # a whole number: a count, a label or a year
        if written not in flagged and not _held(match, pool):
            flagged.append(written)
    return flagged


def _held(match: re.Match[str], pool: list[float]) -> bool:
    sign, digits = match.group("sign") or "", match.group("digits").replace(",", "")
    frac, exp = match.group("frac") or "", match.group("exp") or ""
    x = float(digits + frac + exp)
    places = len(frac) - 1 if frac else 0
    places -= int(exp[1:]) if exp else 0
    tolerance = 0.5 * 10.0 ** -places
    readings = [(x, tolerance)]
    if match.group("pct"):
        readings.append((x / 100, tolerance / 100))
    negative = sign in ("-", "\u2212")
    return any(_rounds_to(v, x, tol, negative) for x, tol in readings for v in pool)


def _rounds_to(v: float, x: float, tolerance: float, negative: bool) -> bool:
    """Whether ``v`` rounds to ``x`` (written with a minus sign when ``negative``)."""
    if negative:
        return v < 0 and abs(-v - x) <= tolerance + EPSILON * max(1.0, abs(x))
    return abs(abs(v) - x) <= tolerance + EPSILON * max(1.0, abs(x))


def flagged_line(numbers: Sequence[str]) -> str:
    """``Not held by a verified metric: 0.73, 12 %.`` (empty when none)."""
    return f"Not held by a verified metric: {', '.join(numbers)}." if numbers else ""


def answer_unheld(answer: RunAnswer, tasks: Sequence[TaskResult]) -> list[str]:
    """The numbers of a run's answer that no completed task's verified metric (or check) holds."""
    done = [t for t in tasks if t.status == "completed"]
    pool = verified_numbers([*(v for t in done for v in t.metrics.values()),
                             *(c.check.value for t in done for c in t.checks)])
    text = "\n".join([answer.answer, answer.analysis, *answer.caveats])
    return unheld(text, pool)
