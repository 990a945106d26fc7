"""The event tree put back together from ``parent_event_id``: order, depth, orphans, loops."""

from __future__ import annotations

from datetime import UTC, datetime

from activities.events.schema import StoredEvent
from activities.events.tree import MAX_INDENT, build_tree, tree_lines, walk
from workflows.contracts.execution import EventRecord

T0 = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


def ev(event_id: str, parent: str | None, seq: int, node: str = "run") -> StoredEvent:
    record = EventRecord(id=event_id, run_id="r", node_id=node, event_type="checkpoint",
                         status=event_id, timestamp=T0, parent_event_id=parent)
    return StoredEvent(seq=seq, recorded_at=T0, event=record)


def shape(events: list[StoredEvent]) -> list[tuple[int, str, str]]:
    return [(depth, n.stored.event.id, n.cut) for depth, n in walk(build_tree(events))]


def line(stored: StoredEvent) -> tuple[str, str]:
    return "T", stored.event.id


def test_children_nest_under_parents_in_store_order_whatever_order_they_are_read() -> None:
    events = [ev("run", None, 1), ev("task1", "run", 2), ev("phase", "task1", 4),
              ev("task2", "run", 3), ev("attempt", "phase", 5), ev("call", "attempt", 6),
              ev("end", "run", 7)]
    expected = [(0, "run", ""), (1, "task1", ""), (2, "phase", ""), (3, "attempt", ""),
                (4, "call", ""), (1, "task2", ""), (1, "end", "")]
    assert shape(events) == expected
    assert shape(list(reversed(events))) == expected


def test_a_missing_parent_makes_an_orphan_root_in_its_place_in_the_order() -> None:
    events = [ev("run", None, 1), ev("lost", "written-by-another-execution", 2),
              ev("child", "lost", 3), ev("late", "run", 4)]
    assert shape(events) == [(0, "run", ""), (1, "late", ""), (0, "lost", "missing"),
                             (1, "child", "")]
    lines = tree_lines(events, line)
    assert lines[2] == "T  lost (its parent event is not among these)"
    assert lines[3] == "T    child"


def test_a_self_parent_and_a_loop_of_parents_are_cut_once_and_nothing_is_lost() -> None:
    events = [ev("self", "self", 1), ev("a", "c", 2), ev("b", "a", 3), ev("c", "b", 4),
              ev("below", "b", 5)]
    assert shape(events) == [(0, "self", "loop"), (0, "a", "loop"), (1, "b", ""),
                             (2, "c", ""), (2, "below", "")]


def test_a_duplicate_id_keeps_its_first_row() -> None:
    events = [ev("run", None, 1), ev("run", None, 9), ev("x", "run", 2)]
    assert shape(events) == [(0, "run", ""), (1, "x", "")]


def test_a_chain_deeper_than_the_stack_is_walked_and_its_indent_is_capped() -> None:
    depth = 20_000
    events = [ev("e0", None, 1), *(ev(f"e{i}", f"e{i - 1}", i + 1) for i in range(1, depth))]
    lines = tree_lines(events, line)
    assert len(lines) == depth
    assert lines[MAX_INDENT] == "T  " + "  " * MAX_INDENT + f"e{MAX_INDENT}"
    assert lines[-1] == "T  " + "  " * MAX_INDENT + f"[{depth - 1}] e{depth - 1}"


def test_no_events_make_no_tree() -> None:
    assert build_tree([]) == []
    assert tree_lines([], line) == []
