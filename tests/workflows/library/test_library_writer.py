"""SkillLibraryWorkflow with the skill writer: when it is asked, what it changes, its misses.

The workflow's logic runs against recorders of the library's and the writer's activities
(briefs go to ``write_skill``, undecided pairs to ``judge_merge``, their answers to
``revise_skills``; a writer that fails is a miss). Then the real library on PostgreSQL and
Qdrant shows that without a model — none configured for the runs, or none on the agents
worker, or one that refuses — the library holds exactly what deterministic extraction makes.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.agents.writer import SkillWriter
from activities.llm.gateway import ModelGateway
from skills.extract import extract
from skills.index import SkillIndex
from skills.library import SkillLibrary
from skills.revise import SkillRevisions
from skills.store import SkillStore
from tests.histories.capture.writer import Recorder, learned, run_library
from tests.skills.extract.batches import sales_batch
from tests.support.fake_anthropic import FakeAnthropic, ToolUse
from workflows.contracts.skills import (
    TASK_FINISHED,
    LibraryState,
)
from workflows.library.workflow import SkillLibraryWorkflow


async def test_with_a_model_new_patterns_are_written_and_undecided_pairs_judged(
        time_env: WorkflowEnvironment) -> None:
    rec = Recorder()
    state, _ = await run_library(time_env, rec, model=True)
    assert rec.briefs_asked == [True]
    assert sorted(rec.written) == ["p@v1", "q@v1"]
    assert sorted(rec.judged) == [("a@v1", "b@v1"), ("a@v1", "c@v1")]
    writings, merges = rec.revised
    assert sorted(w.skill_id for w in writings.writings) == ["p@v1", "q@v1"]
    assert [(m.first, m.second) for m in merges.merges] == [("a@v1", "b@v1")]
    assert state["writer"] == {"written": 2, "judged": 2, "merged": 1, "misses": 0,
                               "last_miss": ""}


async def test_without_a_model_the_writer_is_never_asked(time_env: WorkflowEnvironment) -> None:
    rec = Recorder()
    state, _ = await run_library(time_env, rec, model=False)
    assert rec.briefs_asked == [False]
    assert (rec.written, rec.judged, rec.revised) == ([], [], [])
    assert state["writer"] == {"written": 0, "judged": 0, "merged": 0, "misses": 0,
                               "last_miss": ""}


async def test_a_writer_that_fails_is_a_miss_and_the_rest_is_written(
        time_env: WorkflowEnvironment) -> None:
    rec = Recorder(fail_on="q@v1")
    state, _ = await run_library(time_env, rec, model=True)
    assert [w.skill_id for w in rec.revised[0].writings] == ["p@v1"]
    writer: dict[str, Any] = state["writer"]
    assert writer["misses"] == 1 and writer["written"] == 1
    assert "write_skill" in writer["last_miss"]
    assert "refused" in str(state["last"]).lower()


# --- the real library: without a usable model, exactly the deterministic result ------------------


@pytest.fixture
def refusing() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        fake.route(lambda _: ToolUse({}, stop_reason="refusal"))
        yield fake


@pytest.mark.parametrize("case", ["no-model", "no-key-on-worker", "model-refuses"])
async def test_without_a_usable_model_the_library_holds_the_deterministic_pattern(
        case: str, time_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        refusing: FakeAnthropic) -> None:
    queue = f"skills-{uuid.uuid4().hex[:8]}"
    agents = f"{queue}-agents"
    key = SecretStr("k") if case == "model-refuses" else None
    gateway = ModelGateway(key, refusing.base_url, {"default": "claude-test"})
    writer = SkillWriter(gateway)
    batch = [o.model_copy(update={"writer_queue": None if case == "no-model" else agents})
             for o in sales_batch()]
    async with SkillStore(fresh_database_url) as store:
        library = SkillLibrary(store, lambda: SkillIndex(tmp_path / "index"))
        async with Worker(time_env.client, task_queue=queue, workflows=[SkillLibraryWorkflow],
                          activities=[library.extract_skills, library.maintain_skills,
                                      library.record_outcomes, library.match_skills,
                                      SkillRevisions(store).revise_skills]), \
                Worker(time_env.client, task_queue=agents,
                       activities=[writer.write_skill, writer.judge_merge]):
            handle = await time_env.client.start_workflow(
                SkillLibraryWorkflow.run, LibraryState(), id=f"lib-{queue}", task_queue=queue)
            for item in batch:
                await handle.signal(TASK_FINISHED, item)
            state = await learned(handle, [o.key for o in batch])
            await handle.terminate()
        (stored,) = await store.list()
        library.close()
    await gateway.aclose()
    (expected,) = extract(batch, [], now=datetime.now(UTC)).new
    assert stored.pattern == expected.pattern
    assert (stored.status, stored.note) == (expected.status, expected.note)
    writer_state: dict[str, Any] = state["writer"]
    assert writer_state["misses"] == (0 if case == "no-model" else 1)
    assert writer_state["written"] == 0
