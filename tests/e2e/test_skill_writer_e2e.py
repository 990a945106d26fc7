"""The skill writer end to end: real workers, PostgreSQL, Qdrant, sandbox and the SDK.

Ten finished tasks of one kind reach the library as runs hand them over (six succeeded with
the ``value`` column, four failed with ``amount``), from runs that had a model. Extraction
makes the pattern; the skill writer, answered by the scripted Messages server, writes its
explanation, description and applicability, and the library stores them before its computed
contrast. A goal asked in other words (German) matches nothing above the threshold; the
writer reformulates it once, the library matches the new query, and the skill supplies the
run's plan with no planning call.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from skills.index import SkillIndex, reformulate
from skills.store import SkillStore
from tests.support.e2e import ROOT, isolated_settings, pools_serving, report_of, store_of
from tests.support.fake_anthropic import FakeAnthropic, ToolUse, tool_of
from tests.support.waiting import wait_for
from workers.intake.goalfile import load_goal
from workers.intake.runpolicy import build_policy, queues_from
from workers.settings import Settings
from workflows.contracts.patterns import Skill
from workflows.contracts.plan import Check, JobSpec, Resources
from workflows.contracts.skills import TASK_FINISHED, LibraryState, TaskOutcome, library_id
from workflows.library.workflow import SkillLibraryWorkflow

pytestmark = pytest.mark.integration
JOB = ROOT / "tests" / "data" / "skills" / "describe_groups.py"
API_KEY = "sk-ant-test-writer-NEVER-IN-HISTORY"
WHY = "The successes read the numeric value column; amount is absent from these tables."
WHEN = "It fails when the table has no value column or the group column is missing."
APPLIES = "Per-group summaries of a measurements table: row count and group means."
DESCRIPTION = "Counts the rows of a measurements table and averages the value per group."
GOAL = "Wie hoch ist der Durchschnitt je Gruppe in dieser Messtabelle?"
QUERY = "Describe the measurements table: row count and mean value per group"


def script(fake: FakeAnthropic) -> None:
    fake.on_tool("SkillWritingOutput", ToolUse({
        "why_it_works": WHY, "when_it_fails": WHEN, "description": DESCRIPTION,
        "applicability": APPLIES, "kind": "skill",
        "kind_reason": "one stateless job run as given; no success needed a repair"}))
    fake.on_tool("ReformulationOutput", ToolUse({"query": QUERY, "reason": "in English"}))
    fake.on_tool("ModelReviewOutput", ToolUse({"verdict": "APPROVE", "confidence": 0.9,
                                               "warnings": [], "reasoning": "reads its input"}))
    fake.on_tool("RunAnswer", ToolUse({"answer": "Group b's mean is higher.",
                                       "analysis": "from summary.json", "caveats": []}))


def outcome(site: int, *, ok: bool, agents_queue: str) -> TaskOutcome:
    """A finished task as its run hands it to the library."""
    source = JOB.read_text(encoding="utf-8")
    name = f"site_{site}.csv"
    job = JobSpec(code=source, source=source, filename="describe_groups.py",
                  args={"data": name, "column": "value" if ok else "amount", "group": "group"},
                  expected_artifacts=["summary.json"], expected_metrics=["rows", "groups"],
                  resources=Resources(memory_mb=256, timeout_s=60))
    return TaskOutcome(
        run_id=f"sites-{site}", task_id=f"site{site}",
        action=f"Describe the measurements table of site {site}: row count and mean value "
               "per group.",
        status="completed" if ok else "failed", job=job, input_names=[name],
        acceptance_criteria=["summary.json gives the mean value of every group"],
        checks=[Check(metric="groups", op="==", value=2)], attempts=1,
        failure="" if ok else "nonzero_exit", writer_queue=agents_queue)


@pytest.fixture
async def served(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                 task_queue: str) -> AsyncIterator[tuple[Settings, FakeAnthropic]]:
    with FakeAnthropic() as fake:
        script(fake)
        settings = isolated_settings(tmp_path / "assay", task_queue).model_copy(update={
            "anthropic_api_key": SecretStr(API_KEY), "anthropic_base_url": fake.base_url,
            "skills_auto_approve": 0.0})
        async with pools_serving(settings, fresh_database_url, dev_env.client):
            yield settings, fake


async def skills_in(database_url: str) -> list[Skill]:
    async with SkillStore(database_url) as store:
        return await store.list()


async def test_the_writer_explains_a_pattern_and_a_reformulated_goal_finds_it(
        dev_env: WorkflowEnvironment, served: tuple[Settings, FakeAnthropic], tmp_path: Path,
        fresh_database_url: str) -> None:
    settings, fake = served
    queue = settings.queue_skills
    for site in range(10):
        await dev_env.client.start_workflow(
            SkillLibraryWorkflow.run, LibraryState(auto_approve=0.0), id=library_id(queue),
            task_queue=queue, id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            start_signal=TASK_FINISHED,
            start_signal_args=[outcome(site, ok=site < 6, agents_queue=settings.queue_agents)])

    async def written() -> bool:
        return any(s.pattern.contrast.startswith("Why it works")
                   for s in await skills_in(fresh_database_url))

    await wait_for(written, timeout=120, what="the skill writer's text in the library")
    (skill,) = await skills_in(fresh_database_url)
    pattern = skill.pattern
    assert pattern.description == DESCRIPTION
    assert pattern.context.startswith(APPLIES)
    assert "Computed from the batch:\nTask type: " in pattern.context, "computed context kept"
    assert pattern.contrast.startswith(f"Why it works: {WHY}\nWhen it does not: {WHEN}")
    assert "'amount' failed 4 times (nonzero_exit)" in pattern.contrast, "numbers kept"
    asked = [r.body for r in fake.requests if tool_of(r.body) == "SkillWritingOutput"]
    assert len(asked) == 1
    prompt = str(asked[0]["messages"])
    assert "Successes (6 shown" in prompt
    assert "Failures of the same kind of task (4 shown)" in prompt
    assert "column='amount'" in prompt and "nonzero_exit" in prompt
    library = dev_env.client.get_workflow_handle(library_id(queue))
    state = await library.query(SkillLibraryWorkflow.state)
    assert state["writer"]["written"] == 1 and state["writer"]["misses"] == 0

    with SkillIndex(tmp_path / "index") as index:  # the premise: the goal's own words miss
        index.upsert([skill])
        threshold = build_policy(settings).skills.threshold
        assert not index.search(reformulate(GOAL, 3, data=["site_new.csv"]),
                                threshold=threshold)
        assert index.search([QUERY], threshold=threshold)

    data = tmp_path / "site_new.csv"
    data.write_text("group,value\n" + "".join(f"{'ab'[i % 2]},{i * 0.5:.2f}\n"
                                              for i in range(14)), encoding="utf-8")
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    # The skill's text names its job's kind (not the query's words): the match scores 0.74,
    # so the run takes matches from 0.7; what is tested is that the reformulation finds it.
    policy = build_policy(settings)
    policy = policy.model_copy(update={
        "skills": policy.skills.model_copy(update={"min_confidence": 0.7})})
    req = load_goal(GOAL, [data], max_bytes=settings.max_plan_bytes,
                    policy=policy, queues=queues_from(settings),
                    store=store_of(settings))
    result = report_of(await asyncio.wait_for(client.result(await client.start_run(req)),
                                              timeout=240))
    assert result.status == "completed", result.status_reason
    (task,) = result.tasks
    assert task.provenance.job_author == f"skill:{skill.skill_id}"
    assert task.metrics["rows"] == 14 and task.metrics["groups"] == 2
    assert result.model.calls_by_role.get("query_reformulator") == 1
    assert "planner" not in result.model.calls_by_role
    reformulated = [r.body for r in fake.requests if tool_of(r.body) == "ReformulationOutput"]
    assert len(reformulated) == 1 and GOAL in str(reformulated[0]["messages"])
