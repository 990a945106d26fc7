"""Metrics with uncertainty: a value with its interval, and how tests and reports read one.

A job writes each metric in ``metrics.json`` as a plain value (``"r2": 0.49``) or, where its
analysis has one, as an *estimate* object::

    "r2": {"value": 0.49, "ci": [0.421, 0.55], "level": 0.95,
           "se": 0.033, "n": 442, "method": "bootstrap"}

``value`` (the point estimate) is required; ``ci`` is the interval ``[low, high]`` at
confidence ``level`` (required with ``ci``, between 0 and 1); ``se`` the standard error,
``n`` the sample size, ``method`` how the interval was made (``bootstrap``, ``t``, ``cv``…);
all but ``value`` optional. An object holding ``value`` or ``ci`` is an estimate and is held
to that shape (:func:`estimate_problem`: finite numbers, low ≤ value ≤ high, 0 < level < 1,
n ≥ 1, no other field); any other object is left alone, as before.

A test names what it reads by a suffix on the metric: ``r2`` (the estimate: judged on its
interval when it has one), ``r2.ci`` (the interval, said explicitly), or one number of it:
``r2.value``, ``r2.ci_low``, ``r2.ci_high``, ``r2.se``. :func:`judge_interval` gives the
three-way verdict of a comparison over an interval. Pure functions, no I/O: workflows,
activities and reports share them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal, cast

from pydantic import Field

from workflows.contracts.base import CheckOp, Model, Scalar

FIELDS = ("value", "ci", "level", "se", "n", "method")
"""The fields an estimate object may hold."""
PARTS = ("value", "ci_low", "ci_high", "se")
"""The numbers of an estimate a test may name after a dot (``r2.ci_low``)."""
INTERVAL = "ci"
"""The suffix naming the interval itself (``r2.ci >= 0.5``)."""
METHOD_CHARS = 64

Judged = Literal["supported", "refuted", "inconclusive"]


class Estimate(Model):
    """A metric's point estimate with its uncertainty, as a job wrote it (shape checked)."""

    value: float
    ci: tuple[float, float] | None = None
    """The interval ``[low, high]`` at ``level``."""
    level: float | None = None
    se: float | None = None
    n: int | None = None
    method: str = Field(default="", max_length=METHOD_CHARS)

    def shown(self) -> str:
        """``0.49 [0.421, 0.55] 95 %``: the value, its interval and level (or ``± se``)."""
        text = _number(self.value)
        if self.ci is not None:
            text += f" [{_number(self.ci[0])}, {_number(self.ci[1])}]"
            if self.level is not None:
                text += f" {percent(self.level)}"
        elif self.se is not None:
            text += f" ± {_number(self.se)} se"
        return text


MetricValue = Scalar | Estimate
"""A metric as a study keeps it: a plain value or an estimate."""


def is_estimate(raw: object) -> bool:
    """Whether ``raw`` is written as an estimate (an object holding ``value`` or ``ci``)."""
    if isinstance(raw, Estimate):
        return True
    return isinstance(raw, dict) and bool({"value", "ci"} & set(cast("dict[str, Any]", raw)))


def estimate_problem(name: str, raw: object) -> str:
    """Why the metric ``name`` is a malformed estimate (empty: it is fine, or not an estimate)."""
    if isinstance(raw, Estimate) or not is_estimate(raw):
        return ""
    data = cast("dict[str, Any]", raw)
    where = f"metric {name!r}"
    extra = sorted(set(data) - set(FIELDS))
    if extra:
        return (f"{where} has unknown field(s) {', '.join(map(repr, extra))}; an estimate holds "
                f"{', '.join(FIELDS)}")
    if not _finite(data.get("value")):
        return f"{where} needs \"value\": a finite number (the point estimate)"
    problem = _interval_problem(data)
    if problem:
        return f"{where}: {problem}"
    if "se" in data and not (_finite(data["se"]) and data["se"] >= 0):
        return f"{where}: \"se\" must be a finite number >= 0, found {data['se']!r}"
    n = data.get("n")
    if "n" in data and not (isinstance(n, int) and not isinstance(n, bool) and n >= 1):
        return f"{where}: \"n\" must be a whole number >= 1, found {n!r}"
    method = data.get("method", "")
    if not isinstance(method, str) or len(method) > METHOD_CHARS:
        return f"{where}: \"method\" must be text of at most {METHOD_CHARS} characters"
    return ""


def _interval_problem(data: dict[str, Any]) -> str:
    if "level" in data and not (_finite(data["level"]) and 0 < data["level"] < 1):
        return f"\"level\" must be between 0 and 1 (0.95 for 95 %), found {data['level']!r}"
    if "ci" not in data:
        return ""
    ci = data["ci"]
    if not (isinstance(ci, list) and len(cast("list[Any]", ci)) == 2
            and all(_finite(x) for x in cast("list[Any]", ci))):
        return f"\"ci\" must be [low, high], two finite numbers, found {ci!r}"
    low, high = cast("list[float]", ci)
    if low > high:
        return f"\"ci\" [{low!r}, {high!r}] has low > high"
    if not low <= data["value"] <= high:
        return f"value {data['value']!r} lies outside its interval [{low!r}, {high!r}]"
    if "level" not in data:
        return "\"ci\" needs its \"level\" (0.95 for a 95 % interval)"
    return ""


def estimate_of(raw: object) -> Estimate | None:
    """``raw`` as an :class:`Estimate` if it is a well-formed one, else ``None``."""
    if isinstance(raw, Estimate):
        return raw
    if not is_estimate(raw) or estimate_problem("", raw):
        return None
    return Estimate.model_validate(raw)


def point(raw: object) -> Scalar | None:
    """The value a point comparison uses: a plain value itself, an estimate's ``value``.

    ``None`` for anything else (a malformed estimate, another object, a list, null).
    """
    if isinstance(raw, str | int | float | bool):
        return raw
    found = estimate_of(raw)
    return found.value if found is not None else None


def number(raw: object) -> float | None:
    """The point value as a finite float (``None``: not a finite number, or a flag)."""
    value = point(raw)
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def interval(raw: object) -> tuple[float, float] | None:
    """The interval ``(low, high)`` of a well-formed estimate that has one."""
    found = estimate_of(raw)
    return found.ci if found is not None else None


def shown(raw: object) -> str:
    """A metric as reports print it: an estimate as ``0.49 [0.421, 0.55] 95 %``."""
    found = estimate_of(raw)
    if found is not None:
        return found.shown()
    if isinstance(raw, float):
        return _number(raw)
    return str(raw)


def percent(level: float) -> str:
    """A confidence level as said: ``95 %``, ``97.5 %``."""
    return f"{level * 100:.4g} %"


def split_name(name: str, metrics: Mapping[str, Any]) -> tuple[str, str | None]:
    """The metric a test name reads, and the part named after a dot (``None``: the whole).

    A name the metrics hold as written is the whole metric (a job may use dots in names);
    otherwise ``r2.ci_low`` is part ``ci_low`` of ``r2``, ``r2.ci`` its interval.
    """
    if name in metrics:
        return name, None
    base, dot, part = name.rpartition(".")
    if dot and base and part in (*PARTS, INTERVAL):
        return base, part
    return name, None


def reading(metrics: Mapping[str, Any], name: str) -> tuple[object, str | None]:
    """What a test or check named ``name`` reads: the raw metric (``None``: absent) and its part.

    The part is ``None`` for the whole metric, :data:`INTERVAL` or one of :data:`PARTS`.
    """
    base, part = split_name(name, metrics)
    return metrics.get(base), part


def part_of(raw: object, part: str) -> float | None:
    """One number of an estimate (:data:`PARTS`); ``None`` if it does not have it."""
    found = estimate_of(raw)
    if found is None:
        return number(raw) if part == "value" else None
    if part == "value":
        return found.value
    if part == "se":
        return found.se
    if found.ci is None:
        return None
    return found.ci[0] if part == "ci_low" else found.ci[1] if part == "ci_high" else None


def judge_interval(low: float, high: float, op: CheckOp, threshold: float) -> Judged:
    """How ``op threshold`` holds over the interval ``[low, high]``.

    Every value in it holds → ``supported``; none → ``refuted``; some → ``inconclusive``
    (the interval includes the threshold). ``ci_low > t`` supports ``> t``; ``ci_high <= t``
    refutes it. A degenerate interval (low == high) is judged as its one value.
    """
    if op == "==":
        everyone, nobody = low == high == threshold, not low <= threshold <= high
    elif op == "!=":
        everyone, nobody = not low <= threshold <= high, low == high == threshold
    elif op in (">=", ">"):
        everyone = low >= threshold if op == ">=" else low > threshold
        nobody = high < threshold if op == ">=" else high <= threshold
    else:
        everyone = high <= threshold if op == "<=" else high < threshold
        nobody = low > threshold if op == "<=" else low >= threshold
    return "supported" if everyone else "refuted" if nobody else "inconclusive"


def _finite(raw: object) -> bool:
    return isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw)


def _number(value: float) -> str:
    return f"{value:.4g}"
