"""A study's human decisions on the record: who, when, the comment and the channel.

A person who confirms the rules' decision at the ``cycle`` gate is named beside the rules,
never hidden behind them; the study's state, ``study.json``, ``study.md`` and ``assay study
status`` all say so, and a malformed ``stop`` is refused naming its field.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.reports.study import write_study
from tests.workflows.study.test_study_workflow import (
    ACCEPT,
    H1,
    H2,
    Study,
    cycle_plan,
    gate_waits,
)
from workers.cli.studies import cycle_row


@pytest.fixture
async def study(own_time_env: WorkflowEnvironment, task_queue: str,
                tmp_path: Path) -> AsyncIterator[Study]:
    """A study harness on a server of the test's own (its timers move no other test's time)."""
    made = Study(own_time_env, task_queue, tmp_path)
    async with made.harness.worker():
        yield made


async def test_a_confirmed_cycle_names_who_when_why_and_how(study: Study, tmp_path: Path) -> None:
    inp = study.input([cycle_plan(1, 0.5, "H1", H1, H2), cycle_plan(2, 0.95, "H2", H2)],
                      gate={"human": True, "approvers": ["ada"]}, **ACCEPT)
    handle = await study.start(inp)
    await gate_waits(study, handle)
    await handle.signal("approve", {"gate": "cycle", "decision": "approve", "by": "ada",
                                    "comment": "H1 is out", "channel": "cli"})
    await gate_waits(study, handle)  # the second cycle's: sent as `temporal` sends it
    await handle.signal("stop", {"by": "ada", "comment": "now", "task": "x"})  # malformed

    progress = await study.until(handle, "the refused stop", lambda p: bool(p.refused))
    assert progress.refused[-1].startswith("unknown: malformed stop: unknown field 'task'")
    await handle.signal("approve", {"gate": "cycle", "decision": "approve", "by": "ada",
                                    "comment": "criteria met"})
    result = await handle.result()

    final = study.reports.written[-1]
    first, last = (s.decision for s in final.state.summaries)
    assert first is not None and last is not None and result.decision == last
    assert (first.action, first.by) == ("pivot", "rules")  # the rules decided ...
    assert first.person is not None and first.person.at is not None  # ... ada confirmed
    assert (first.person.by, first.person.comment, first.person.channel) == (
        "ada", "H1 is out", "cli")
    assert first.who().startswith("rules, confirmed by ada via cli, ")
    assert first.who().endswith('UTC: "H1 is out"')
    assert last.person is not None and (last.person.channel, last.person.comment) == (
        "temporal", "criteria met")

    paths = write_study(final, tmp_path / "report", tmp_path)
    written = json.loads(Path(paths.results_json).read_text())
    assert written["summaries"][0]["decision"]["person"]["channel"] == "cli"
    markdown = Path(paths.summary_md).read_text()
    assert "**pivot** → H2 (rules, confirmed by ada via cli, " in markdown
    assert "H1 is out" in markdown and "criteria met" in markdown
    row = cycle_row(final.state.summaries[1], final.state.policy)
    assert row[4].startswith("stop (rules, confirmed by ada via temporal, ")
