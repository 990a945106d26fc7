"""A run's events as the tree their ``parent_event_id`` draws: run → task → phase → attempt.

Workflows set each event's parent to what they held open when they added it
(:mod:`workflows.common.events`); this module puts the stored events back together for
``assay watch --tree`` and the report's ``timeline.md``. It trusts nothing it reads: an event
whose parent is not among the events (written before parents were, by another execution, or
cut off by a limit) is an *orphan* and starts a tree of its own where it falls in the order; a
parent id naming the event itself, or a loop of parents, is broken the same way; and the walk is
iterative, so a chain of any length cannot exhaust the stack.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from activities.events.schema import StoredEvent

INDENT = "  "
MAX_INDENT = 12
"""Levels a line is indented at most (deeper ones say their depth instead)."""


Cut = Literal["", "missing", "loop"]
CUT_TEXT: dict[str, str] = {"missing": " (its parent event is not among these)",
                            "loop": " (its parent ids loop; cut here)"}


@dataclass
class EventNode:
    """One event with the events nested under it, in the order they were stored."""

    stored: StoredEvent
    children: list[EventNode] = field(default_factory=list["EventNode"])
    cut: Cut = ""
    """Why it is a root although its event names a parent: ``missing`` (not among the events
    read) or ``loop`` (the parents lead back to it)."""


def build_tree(events: Sequence[StoredEvent]) -> list[EventNode]:
    """The events' trees: their roots in ``seq`` order, each one's children likewise.

    An event id stored twice keeps its first row. An event whose parent is missing or is the
    event itself becomes a root; a loop of parents is cut at its earliest event.
    """
    nodes: dict[str, EventNode] = {}
    for stored in sorted(events, key=lambda s: s.seq):
        nodes.setdefault(stored.event.id, EventNode(stored))
    roots: list[EventNode] = []
    for node in nodes.values():
        parent_id = node.stored.event.parent_event_id
        parent = nodes.get(parent_id) if parent_id is not None else None
        if parent is None or parent is node:
            node.cut = "" if parent_id is None else "missing" if parent is None else "loop"
            roots.append(node)
        else:
            parent.children.append(node)
    reached = {id(n) for _, n in walk(roots)}
    for node in nodes.values():
        if id(node) not in reached:  # above it, parents loop: cut the loop once
            cut = _earliest_in_loop(node, nodes)
            nodes[_parent_id(cut)].children.remove(cut)
            cut.cut = "loop"
            roots.append(cut)
            reached.update(id(n) for _, n in walk([cut]))
    return sorted(roots, key=lambda n: n.stored.seq)


def _parent_id(node: EventNode) -> str:
    parent_id = node.stored.event.parent_event_id
    assert parent_id is not None  # only nodes below a loop get here
    return parent_id


def _earliest_in_loop(node: EventNode, nodes: dict[str, EventNode]) -> EventNode:
    """The earliest event of the loop of parents above ``node`` (every one has a parent)."""
    seen: set[str] = set()
    current = node
    while current.stored.event.id not in seen:
        seen.add(current.stored.event.id)
        current = nodes[_parent_id(current)]
    loop, member = [current], nodes[_parent_id(current)]
    while member is not current:
        loop.append(member)
        member = nodes[_parent_id(member)]
    return min(loop, key=lambda n: n.stored.seq)


def walk(roots: Sequence[EventNode]) -> Iterator[tuple[int, EventNode]]:
    """Every node under ``roots``, parents first, with its depth (a root's is 0)."""
    stack: list[tuple[int, EventNode]] = [(0, root) for root in reversed(roots)]
    while stack:
        depth, node = stack.pop()
        yield depth, node
        stack.extend((depth + 1, child) for child in reversed(node.children))


Line = Callable[[StoredEvent], tuple[str, str]]
"""How a line says an event: a left column (its time) and the rest, indented between them."""


def tree_lines(events: Sequence[StoredEvent], line: Line) -> list[str]:
    """The events as lines indented by their depth in the tree; a cut root's says why.

    Example (``line`` gives the time, then where and what)::

        02:31:05  run         started: iris
        02:31:05    run         task 1 started
        02:31:06      task 1      started
        02:31:06        task 1      phase execute
    """
    return [indented(depth, node, line) for depth, node in walk(build_tree(events))]


def indented(depth: int, node: EventNode, line: Line) -> str:
    """One node's line, indented by its depth (at most ``MAX_INDENT`` levels, then a number)."""
    left, rest = line(node.stored)
    deeper = f"[{depth}] " if depth > MAX_INDENT else ""
    return f"{left}  {INDENT * min(depth, MAX_INDENT)}{deeper}{rest}{CUT_TEXT.get(node.cut, '')}"
