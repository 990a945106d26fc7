"""Scoring: a run's results JSON against a task's reference answer, and pass@k over samples.

A path walks the results JSON by keys (``model.calls``); a list is entered by position
(``tasks.0``), by the ``task_id`` of one of its objects (``tasks.fit.metrics.slope``), so a
reference names a task the way its plan does, or wholly (``tasks.*.metrics.p_value``) for a
goal whose planner names the tasks; a reference part holds if any value its path reaches
holds it. pass@k is the unbiased estimator of Chen et al.
(2021): with n samples of which c passed, the chance that at least one of k drawn without
replacement passed, 1 - C(n-c, k) / C(n, k).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from workers.evaluation.suite import Expect

OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge}
MISSING = object()


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``n`` samples with ``c`` correct (``k <= n``)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def candidates(document: Any, path: str) -> list[Any]:
    """Every value a dotted ``path`` reaches in a JSON document (none: an empty list).

    A segment ``*`` enters every item of a list (``tasks.*.metrics.p_value``: any task's),
    and ``a|b`` tries each key (``difference|mean_difference``).
    """
    here: list[Any] = [document]
    for part in path.split("."):
        here = [found for value in here for found in _step(value, part)]
    return here


def lookup(document: Any, path: str) -> Any:
    """The first value ``path`` reaches in a JSON document, or :data:`MISSING`."""
    found = candidates(document, path)
    return found[0] if found else MISSING


def _step(value: Any, part: str) -> list[Any]:
    if isinstance(value, dict):
        mapping = cast(dict[str, Any], value)
        return [mapping[key] for key in part.split("|") if key in mapping]
    if not isinstance(value, list):
        return []
    items = cast(list[Any], value)
    if part == "*":
        return items
    if part.isdigit():
        return [items[int(part)]] if int(part) < len(items) else []
    return [i for i in items
            if isinstance(i, dict) and str(cast(dict[str, Any], i).get("task_id")) == part]


@dataclass(frozen=True)
class Verdict:
    """One reference part held or not, and what the run showed."""

    expect: Expect
    passed: bool
    found: str

    def line(self) -> str:
        """``tasks.fit.metrics.slope = 2.01 (want 2 ± 0.05)``, for reports."""
        return f"{self.expect.path} = {self.found} (want {want(self.expect)})"


def want(expect: Expect) -> str:
    """What a reference part asks for, in words."""
    if expect.op is not None:
        return f"{expect.op} {expect.value}"
    tol = max(expect.abs_tol, expect.rel_tol * abs(_number(expect.value) or 0.0))
    size = "|x| = " if expect.magnitude else ""
    return f"{size}{expect.value} ± {tol:.4g}" if tol else f"{size}{expect.value}"


def judge(document: Any, expect: Expect) -> Verdict:
    """Whether the run's results hold one reference part (any value its path reaches)."""
    found = candidates(document, expect.path)
    if not found:
        return Verdict(expect, False, "missing")
    shown = next((v for v in found if _holds(v, expect)), None)
    value = found[0] if shown is None else shown
    text = f"{value:.6g}" if isinstance(value, float) else str(value)
    return Verdict(expect, shown is not None, text)


def _holds(found: Any, expect: Expect) -> bool:
    target, number = expect.value, _number(found)
    if expect.magnitude and number is not None:
        found, number = abs(number), abs(number)
    if expect.op is not None:
        try:
            return bool(OPS[expect.op](found, target))
        except TypeError:
            return False
    wanted = _number(target)
    if wanted is not None:
        if number is None or not math.isfinite(number):
            return False
        return abs(number - wanted) <= max(expect.abs_tol, expect.rel_tol * abs(wanted))
    return found == target


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def score(document: Any, expects: list[Expect]) -> list[Verdict]:
    """Every reference part judged against one run's results JSON."""
    return [judge(document, e) for e in expects]
