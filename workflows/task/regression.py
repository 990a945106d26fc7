"""Did a retry make a declared metric worse? Pure comparison used to roll retries back."""

from __future__ import annotations

from typing import Any, TypeGuard

from workflows.contracts.estimates import interval, is_estimate, number, shown, within_intervals
from workflows.contracts.plan import Check

_BETTER_WHEN = {"<": "lower", "<=": "lower", ">": "higher", ">=": "higher"}


def regressed_metrics(old: dict[str, Any], new: dict[str, Any], declared: list[str],
                      checks: list[Check], *, directional: bool = True,
                      estimates: bool = False) -> list[str]:
    """Descriptions of declared metrics that got worse from ``old`` to ``new``.

    A metric regresses when it disappears, when a check on it held before and fails now, or
    when a check gives it a direction (``<`` means lower is better) and it moves the wrong
    way. Metrics without a check and without a direction are not judged. With
    ``directional`` off (the attempt before failed, so its numbers are not a result to keep),
    only a check that held and now fails counts.

    With ``estimates`` on, a metric written as an estimate is judged by its point value, and a
    move within the intervals (either value inside the other's interval, the tie rule of
    branch selection) is no regression: a noisy re-run is not worse. Off, estimates are not
    judged (as workflows that started before they were).
    """
    regressions: list[str] = []
    for name in declared:
        if name not in old:
            continue
        if name not in new:
            regressions.append(f"metric {name!r} was reported before the retry "
                               f"({old[name]!r}) and is missing now")
            continue
        for check in (c for c in checks if c.metric == name):
            verdict = (_worse_estimate(name, old[name], new[name], check, directional)
                       if estimates and (is_estimate(old[name]) or is_estimate(new[name]))
                       else _worse(name, old[name], new[name], check, directional))
            if verdict:
                regressions.append(verdict)
                break
    return regressions


def has_estimates(metrics: dict[str, Any], declared: list[str]) -> bool:
    """Whether any of the ``declared`` metrics is written as an estimate."""
    return any(is_estimate(metrics.get(name)) for name in declared)


def _worse(name: str, before: Any, after: Any, check: Check, directional: bool,
           said: tuple[str, str] | None = None) -> str:
    """Why ``before`` to ``after`` is worse under ``check`` (empty: it is not).

    ``said`` is how the two values are written (their ``repr`` unless given).
    """
    if not _numeric(before) or not _numeric(after):
        return ""
    was, now = said or (repr(before), repr(after))
    if _holds(check, before) and not _holds(check, after):
        return (f"metric {name!r} held before the retry ({was}) and now fails "
                f"{check.describe()} ({now})")
    direction = _BETTER_WHEN.get(check.op) if directional else None
    if (direction == "lower" and after > before) or (direction == "higher" and after < before):
        return (f"metric {name!r} moved from {was} to {now}; "
                f"{check.describe()} wants it {direction}")
    return ""


def _worse_estimate(name: str, before: Any, after: Any, check: Check, directional: bool) -> str:
    """:func:`_worse` on point values, a move within the intervals not counting."""
    old, new = number(before), number(after)
    if old is None or new is None or within_intervals(old, interval(before), new,
                                                       interval(after)):
        return ""
    return _worse(name, old, new, check, directional, (shown(before), shown(after)))


def _numeric(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _holds(check: Check, value: float) -> bool:
    return check.holds(value) if _numeric(check.value) else True
