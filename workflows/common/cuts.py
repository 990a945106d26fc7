"""Cuts that say what they left out: how every bounded list an agent is shown is kept.

Whatever a prompt bounds (metrics, checks, artifacts, tasks, cycles, hypotheses, memory
notes) goes through :func:`keep`: at most a bound of items, those that matter first (the
names in ``first``: metrics a check, a hypothesis's test or the key metric names), the rest in
their own order; and a line that says how many were left out and which, e.g. ``… 4 more
metrics not shown: a, b, c, d``. Nothing is cut silently. Deterministic, pure code: workflows
and activities both use it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TypeVar

from workflows.contracts.words import plural

NAMES_LISTED = 20
"""Names of left-out items a note lists (the rest are counted)."""
NAME_CHARS = 64
"""A listed name is shown up to this many characters."""

ItemT = TypeVar("ItemT")
ValueT = TypeVar("ValueT")


def keep(items: Sequence[ItemT], bound: int, *, what: str, many: str = "",
         first: Collection[str] = (), name: Callable[[ItemT], str] | None = None,
         ) -> tuple[list[ItemT], str]:
    """At most ``bound`` of ``items``, those named in ``first`` before the others.

    Args:
        items: the items, in the order they are shown.
        bound: the most items kept.
        what: the noun of one item (``metric``), for the note.
        many: its plural when it is not ``what`` + s (``hypotheses``).
        first: names of the items kept before any other.
        name: an item's name; None: the note counts the items left out without naming them.

    Returns:
        The kept items in their own order, and the note on the rest ("" when none was cut).
    """
    if len(items) <= bound:
        return list(items), ""
    named: Callable[[ItemT], str] = name or _unnamed
    order = sorted(range(len(items)), key=lambda i: (named(items[i]) not in first, i))
    chosen = set(order[:max(0, bound)])
    kept = [item for i, item in enumerate(items) if i in chosen]
    left = [item for i, item in enumerate(items) if i not in chosen]
    return kept, note(len(left), what, many,
                      [named(item) for item in left] if name is not None else None)


def _unnamed(_: object) -> str:
    return ""


def keep_mapping(items: Mapping[str, ValueT], bound: int, *, what: str, many: str = "",
                 first: Collection[str] = ()) -> tuple[dict[str, ValueT], str]:
    """:func:`keep` for named values (metrics): at most ``bound`` keys, ``first`` first."""
    kept, said = keep(list(items.items()), bound, what=what, many=many, first=first,
                      name=lambda pair: pair[0])
    return dict(kept), said


def note(count: int, what: str, many: str = "", names: Sequence[str] | None = None) -> str:
    """``… 4 more metrics not shown: a, b, c, d`` ("" when ``count`` is 0).

    At most :data:`NAMES_LISTED` names are listed, each cut to :data:`NAME_CHARS`; the others
    are counted.
    """
    if count <= 0:
        return ""
    said = f"… {plural(count, 'more ' + what, 'more ' + (many or what + 's'))} not shown"
    if not names:
        return said
    listed = [n if len(n) <= NAME_CHARS else n[:NAME_CHARS] + "…" for n in names[:NAMES_LISTED]]
    rest = len(names) - len(listed)
    return f"{said}: {', '.join(listed)}" + (f" and {rest} others" if rest else "")
