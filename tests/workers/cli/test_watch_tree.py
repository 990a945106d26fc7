"""``assay watch RUN --tree``: a finished run's events indented as they nest, hostile rows too."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from activities.events.store import EventStore
from tests.support.e2e import EXAMPLE
from tests.workers.cli.test_cli import cli
from workflows.contracts.execution import EventRecord, RecordEventsInput


def indent(line: str) -> int:
    """Spaces between a tree line's time column and its text."""
    rest = line[len("HH:MM:SS  "):]
    return len(rest) - len(rest.lstrip(" "))


async def test_watch_tree_indents_run_task_phase_and_attempt_and_survives_hostile_rows(
        served: dict[str, str], fresh_database_url: str) -> None:
    code, out, err = await cli(served, "run", str(EXAMPLE), "--wait", "--json", "--again")
    assert code == 0, err
    run_id = json.loads(out)["run_id"]
    code, out, err = await cli(served, "watch", run_id, "--tree")
    assert code == 0, err
    lines = out.splitlines()
    assert indent(lines[0]) == 0 and "run" in lines[0] and "started" in lines[0]
    handed = next(i for i, line in enumerate(lines) if "task 4 started" in line)
    task = next(i for i in range(handed + 1, len(lines)) if "task 4" in lines[i]
                and lines[i].rstrip().endswith("started"))
    phase = next(i for i in range(task, len(lines)) if "phase execute" in lines[i])
    job = next(i for i in range(phase, len(lines)) if "job succeeded in" in lines[i])
    assert indent(lines[handed]) == 2 and indent(lines[task]) == 4
    assert indent(lines[phase]) == 6 and indent(lines[job]) == 10  # under its attempt (8)
    assert "job " in lines[job - 1] and "started" in lines[job - 1]
    assert not any("not among these" in line for line in lines)
    code, out, _ = await cli(served, "watch", run_id, "--tree", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == len(lines)
    assert all(r["tree_depth"] == r["event"]["depth"] for r in rows)

    store = EventStore(fresh_database_url)
    await store.open()
    try:  # rows anyone with the database could write: escapes, a loop, a missing parent
        hostile = [EventRecord(id=f"h{i}", run_id=run_id, node_id="\x1b[2J\x1b[31mx",
                               event_type="error", status="\x07bad", timestamp=datetime.now(UTC),
                               parent_event_id=parent, outputs={"reason": "\x1b]0;owned\x07"})
                   for i, parent in enumerate(["h1", "h0", "nowhere", "h3"])]
        await store.record_events(RecordEventsInput(events=hostile))
    finally:
        await store.close()
    code, out, err = await cli(served, "watch", run_id, "--tree")
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert out.count("(its parent ids loop; cut here)") == 2  # h0↔h1, h3 → itself
    assert out.count("(its parent event is not among these)") == 1  # h2
    for args in (["watch", "\x1b[2J", "--tree"], ["watch", "x" * 5000, "--tree", "--json"]):
        code, out, err = await cli(served, *args)
        assert code == 1 and "no run" in err and "\x1b" not in out + err, err
