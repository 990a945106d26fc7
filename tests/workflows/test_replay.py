"""Saved histories must replay against today's workflow code (determinism guard).

They are captured by ``tests.histories.capture``; the patches they may carry markers of are
those in force in ``workflows/patches.py`` (a release re-captures them without the retired).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from client.assay import DATA_CONVERTER
from tests.workflows.incompatible import ReorderedTaskWorkflow
from workflows import patches
from workflows.library.workflow import SkillLibraryWorkflow
from workflows.research.batch import TaskBatchWorkflow
from workflows.research.branch import BranchWorkflow
from workflows.research.workflow import ResearchWorkflow
from workflows.study.workflow import StudyWorkflow
from workflows.task.workflow import TaskWorkflow

HISTORIES = sorted((Path(__file__).resolve().parent.parent / "histories").glob("*.json"))


def test_histories_are_present() -> None:
    kinds = {path.name.split(".")[1].split("-")[0] for path in HISTORIES}
    assert kinds == {"research", "task", "branch", "library", "study", "batch"}, (
        "run `python -m tests.histories.capture`")


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_history_replays(path: Path) -> None:
    replayer = Replayer(workflows=[ResearchWorkflow, BranchWorkflow, TaskWorkflow, StudyWorkflow,
                                   SkillLibraryWorkflow, TaskBatchWorkflow],
                        data_converter=DATA_CONVERTER)
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, f"{path.name} no longer replays: {result.replay_failure}"


def test_histories_mark_only_the_patches_in_force() -> None:
    in_force = {p.id for p in patches.PATCHES}
    stale: dict[str, set[str]] = {}
    for path in HISTORIES:
        for event in WorkflowHistory.from_json(path.stem, path.read_text()).events:
            attrs = event.marker_recorded_event_attributes
            if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED \
                    and attrs.marker_name == "core_patch":
                marked = json.loads(attrs.details["patch-data"].payloads[0].data)["id"]
                if marked not in in_force:
                    stale.setdefault(path.name, set()).add(marked)
    assert stale == {}, "re-capture them: `python -m tests.histories.capture`"


def test_a_saved_study_ends_in_a_workflow_task_a_query_split_off() -> None:
    """``study.study-2`` holds the path patch ``study-patches-first`` guards: its capture
    queries the study while the last gate's flush (a local activity) runs, so a new workflow
    task follows that flush with no new event, and the study ends in it. Its patches were
    settled as it started; settled at its end they would not replay (the patch's reason)."""
    events = WorkflowHistory.from_json("study", (HISTORIES[0].parent / "study.study-2.json")
                                       .read_text()).events
    kinds = [e.event_type for e in events]
    split = [i for i in range(1, len(events) - 1)
             if kinds[i] == EventType.EVENT_TYPE_MARKER_RECORDED
             and kinds[i + 1] == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED
             and events[i].marker_recorded_event_attributes.marker_name == "core_local_activity"]
    assert split, "re-capture it: `python -m tests.histories.capture.study`"
    patched = [i for i, e in enumerate(events)
               if e.marker_recorded_event_attributes.marker_name == "core_patch"]
    assert patched and max(patched) < split[-1]  # every patch settled before the split


async def test_incompatible_change_is_caught() -> None:
    path = next(p for p in HISTORIES if ".task-" in p.name)
    replayer = Replayer(workflows=[ReorderedTaskWorkflow], data_converter=DATA_CONVERTER)
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is not None
    assert "nondetermin" in str(result.replay_failure).lower()
