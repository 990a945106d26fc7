"""Did a retry make a declared metric worse? Pure comparison used to roll retries back."""

from __future__ import annotations

from typing import Any, TypeGuard

from workflows.contracts.plan import Check

_BETTER_WHEN = {"<": "lower", "<=": "lower", ">": "higher", ">=": "higher"}


def regressed_metrics(old: dict[str, Any], new: dict[str, Any], declared: list[str],
                      checks: list[Check], *, directional: bool = True) -> list[str]:
    """Descriptions of declared metrics that got worse from ``old`` to ``new``.

    A metric regresses when it disappears, when a check on it held before and fails now, or
    when a check gives it a direction (``<`` means lower is better) and it moves the wrong
    way. Metrics without a check and without a direction are not judged. With
    ``directional`` off (the attempt before failed, so its numbers are not a result to keep),
    only a check that held and now fails counts.
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
            verdict = _worse(name, old[name], new[name], check, directional)
            if verdict:
                regressions.append(verdict)
                break
    return regressions


def _worse(name: str, before: Any, after: Any, check: Check, directional: bool) -> str:
    if not _numeric(before) or not _numeric(after):
        return ""
    if _holds(check, before) and not _holds(check, after):
        return (f"metric {name!r} held before the retry ({before!r}) and now fails "
                f"{check.describe()} ({after!r})")
    direction = _BETTER_WHEN.get(check.op) if directional else None
    if (direction == "lower" and after > before) or (direction == "higher" and after < before):
        return (f"metric {name!r} moved from {before!r} to {after!r}; "
                f"{check.describe()} wants it {direction}")
    return ""


def _numeric(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _holds(check: Check, value: float) -> bool:
    return check.holds(value) if _numeric(check.value) else True
