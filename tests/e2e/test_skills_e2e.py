"""The skill library end to end: real workers, sandbox, PostgreSQL, Qdrant and the SDK.

Ten similar tasks run; their outcomes reach the library workflow by signal and batch
extraction turns them into a candidate skill with typed parameters. A person approves it.
The same kind of goal is then run twice against a scripted model server: without the
library (planner, plan reviewer, coder, reviewers, output processor) and with it — the skill
supplies the plan with no planning or coding call, fewer tokens, and says so in provenance.
Its use comes back to the library as statistics.

On a fresh install the built-in skills answer a goal with no model at all; a skill whose job
fails on the goal's data (a major deviation) sends the run back to planning.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from skills.store import SkillStore
from tests.support.e2e import ROOT, isolated_settings, report_of, store_of
from tests.support.fake_anthropic import FakeAnthropic, ToolUse
from tests.support.waiting import wait_for
from workers.intake.goalfile import load_goal
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import AgentFlags, build_policy, queues_from
from workers.pools.builders import SERVED_POOLS, run_pools
from workers.settings import Settings
from workflows.contracts.patterns import Skill
from workflows.contracts.results import RunReport

pytestmark = pytest.mark.integration
JOB = ROOT / "tests" / "data" / "skills" / "describe_groups.py"
GOAL = "Describe the measurements table of the new site: row count and mean value per group."
API_KEY = "sk-ant-test-skills-NEVER-IN-HISTORY"

CODE = """\
import csv
import json

with open("site_new.csv", newline="", encoding="utf-8") as handle:
    rows = list(csv.DictReader(handle))
groups = {}
for row in rows:
    groups.setdefault(row["group"], []).append(float(row["value"]))
means = {name: sum(values) / len(values) for name, values in sorted(groups.items())}
with open("summary.json", "w", encoding="utf-8") as out:
    json.dump({"rows": len(rows), "means": means}, out, indent=2)
with open("metrics.json", "w", encoding="utf-8") as out:
    json.dump({"rows": len(rows), "groups": len(means)}, out)
"""


def table(path: Path, site: int) -> Path:
    lines = ["group,value"] + [f"{'ab'[i % 2]},{site + i * 0.5:.2f}" for i in range(12 + site)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def ten_tasks(folder: Path) -> Path:
    """A plan of ten similar tasks, each describing another site's table."""
    (folder / "jobs").mkdir(parents=True)
    shutil.copy(JOB, folder / "jobs" / "describe_groups.py")
    decisions: list[dict[str, object]] = []
    for site in range(1, 11):
        name = f"site_{site}.csv"
        table(folder / name, site)
        decisions.append({
            "task_id": f"site{site}", "priority": "HIGH",
            "action": f"Describe the measurements table of site {site}: row count and mean "
                      "value per group.",
            "acceptance_criteria": ["summary.json gives the mean value of every group"],
            "inputs": [name],
            "job": {"entry": "jobs/describe_groups.py",
                    "args": {"data": name, "column": "value", "group": "group"},
                    "expected_artifacts": ["summary.json"],
                    "expected_metrics": ["rows", "groups"],
                    "resources": {"memory_mb": 256, "timeout_s": 60}},
            "checks": [{"metric": "groups", "op": "==", "value": 2}]})
    plan = folder / "sites.json"
    plan.write_text(json.dumps({"meeting_id": "sites", "decisions": decisions}),
                    encoding="utf-8")
    return plan


def script(fake: FakeAnthropic) -> None:
    """The model's answers for the goal when it has to be planned and coded, and the
    reflector's on a skill's job that fails on the goal's data."""
    fake.on_tool("PlanDraftOutput", ToolUse({
        "context": "One step: describe the table.",
        "tasks": [{"task_id": "describe", "priority": "HIGH", "action": GOAL,
                   "acceptance_criteria": ["summary.json lists the mean of every group"],
                   "checks": [{"metric": "groups", "op": "==", "value": 2}],
                   "inputs": ["site_new.csv"]}]}, usage=None))
    fake.on_tool("PlanReviewOutput", ToolUse({"verdict": "APPROVE", "concerns": [],
                                              "reasoning": "one checked task"}, usage=None))
    fake.on_tool("JobOutput", ToolUse({
        "code": CODE, "expected_artifacts": ["summary.json"],
        "expected_metrics": ["rows", "groups"], "resources": {"memory_mb": 256,
                                                              "timeout_s": 60},
        "confidence": 0.8, "reasoning": "standard library only"}, usage=None))
    fake.on_tool("ModelReviewOutput", ToolUse({"verdict": "APPROVE", "confidence": 0.85,
                                               "warnings": [], "reasoning": "reads its input"},
                                              usage=None))
    fake.on_tool("ReflectorOutput", ToolUse({
        "root_cause": "missing_column", "likely_fix": "read the columns the table has",
        "reason": "The job reads a value column the table does not have; only new code cures "
                  "that, no argument or resource can.", "changes": []}, usage=None))
    fake.on_tool("RunAnswer", ToolUse({"answer": "Group b's mean is higher.",
                                       "analysis": "from summary.json", "caveats": []},
                                      usage=None))


@pytest.fixture(params=[False], ids=["empty-library"])
async def served(request: pytest.FixtureRequest, dev_env: WorkflowEnvironment,
                 fresh_database_url: str, tmp_path: Path,
                 task_queue: str) -> AsyncIterator[Settings]:
    with FakeAnthropic() as fake:
        script(fake)
        settings = isolated_settings(tmp_path / "assay", task_queue).model_copy(update={
            "anthropic_api_key": SecretStr(API_KEY), "anthropic_base_url": fake.base_url,
            "skills_builtin": request.param})
        stop = asyncio.Event()
        running = asyncio.create_task(run_pools(settings, list(SERVED_POOLS),
                                                database_url=fresh_database_url, stop=stop,
                                                client=dev_env.client))
        yield settings
        stop.set()
        await running


async def skills_in(database_url: str) -> list[Skill]:
    async with SkillStore(database_url) as store:
        return await store.list()


async def test_ten_similar_tasks_become_a_skill_that_answers_the_next_goal_without_planning(
        dev_env: WorkflowEnvironment, served: Settings, tmp_path: Path,
        fresh_database_url: str) -> None:
    settings = served
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    no_model = build_policy(settings, agents=AgentFlags(enabled=False))
    req = load_plan(ten_tasks(tmp_path / "plan"), max_bytes=settings.max_plan_bytes,
                    policy=no_model, queues=queues_from(settings), store=store_of(settings))
    first = report_of(await asyncio.wait_for(client.result(await client.start_run(req)),
                                             timeout=180))
    assert first.status == "completed", first.status_reason
    assert all(t.skill_report and t.skill_report.reported for t in first.tasks)

    async def extracted() -> bool:
        return any(s.status == "candidate" for s in await skills_in(fresh_database_url))

    await wait_for(extracted, timeout=60, what="batch extraction of the ten outcomes")
    (candidate,) = await skills_in(fresh_database_url)
    pattern = candidate.pattern
    assert pattern.job is not None and pattern.job.source == JOB.read_text(encoding="utf-8")
    data = pattern.parameter("data")
    assert data is not None and data.type == "file_path" and data.extensions == ["csv"]
    assert candidate.metrics.evidence_successes == 10
    assert len(pattern.source_runs) >= 1

    async with SkillStore(fresh_database_url) as store:
        approved = await store.set_status(candidate.skill_id, "active", by="tester")
    assert approved.status == "active"

    new_site = table(tmp_path / "site_new.csv", 20)
    planned = await run_goal(client, settings, new_site, skills=False)
    from_skill = await run_goal(client, settings, new_site, skills=True)

    assert planned.status == "completed", planned.status_reason
    assert from_skill.status == "completed", from_skill.status_reason
    (task,) = from_skill.tasks
    assert task.provenance.skill is not None
    assert task.provenance.skill.skill_id == candidate.skill_id
    assert task.provenance.job_author == f"skill:{candidate.skill_id}"
    assert task.provenance.skill.parameters["data"] == "site_new.csv"
    assert task.metrics["rows"] == 32 and task.metrics["groups"] == 2
    assert from_skill.skills.applied == {task.task_id: candidate.skill_id}
    roles = set(from_skill.model.calls_by_role)
    assert not roles & {"planner", "plan_reviewer", "coder"}, roles
    assert {"planner", "coder"} <= set(planned.model.calls_by_role)
    assert from_skill.model.usage.total_tokens < planned.model.usage.total_tokens

    async def counted() -> bool:
        (skill,) = await skills_in(fresh_database_url)
        return skill.metrics.used == 1
    await wait_for(counted, timeout=30, what="the skill's use to be recorded")
    (skill,) = await skills_in(fresh_database_url)
    assert (skill.metrics.retrieved, skill.metrics.used, skill.metrics.succeeded) == (1, 1, 1)


async def run_goal(client: AssayClient, settings: Settings, data: Path, *,
                   skills: bool) -> RunReport:
    policy = build_policy(settings, skills=skills)
    req = load_goal(GOAL, [data], max_bytes=settings.max_plan_bytes, policy=policy,
                    queues=queues_from(settings), store=store_of(settings))
    run_id = await client.start_run(req, again=True)
    return report_of(await asyncio.wait_for(client.result(run_id), timeout=180))


DESCRIBE = "Describe the distribution of the value column: mean, median, spread and quartiles."


@pytest.mark.parametrize("served", [True], ids=["builtin-library"], indirect=True)
async def test_a_builtin_skill_answers_a_goal_with_no_model_at_all(
        dev_env: WorkflowEnvironment, served: Settings) -> None:
    settings = served
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    req = load_goal(DESCRIBE, [ROOT / "tests" / "data" / "goal" / "measurements.csv"],
                    max_bytes=settings.max_plan_bytes,
                    policy=build_policy(settings, agents=AgentFlags(enabled=False)),
                    queues=queues_from(settings), store=store_of(settings))
    result = report_of(await asyncio.wait_for(client.result(await client.start_run(req)),
                                              timeout=180))
    assert result.status == "completed", result.status_reason
    (task,) = result.tasks
    assert task.provenance.job_author == "skill:describe-column@v1"
    assert task.provenance.skill is not None
    assert task.provenance.skill.parameters == {"data": "measurements.csv", "column": "value"}
    assert result.model.calls == 0
    assert result.plan is not None and "describe-column@v1" in (result.plan.context or "")
    retrieved = [r.skill_id for r in result.skills.retrieved["goal"]]
    assert retrieved[0] == "describe-column@v1"


@pytest.mark.parametrize("served", [True], ids=["builtin-library"], indirect=True)
async def test_a_skill_that_fails_on_the_goals_data_falls_back_to_planning(
        dev_env: WorkflowEnvironment, served: Settings, tmp_path: Path) -> None:
    settings = served
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    other = tmp_path / "other" / "site_new.csv"  # no "value" column: the skill's job fails
    other.parent.mkdir()
    other.write_text("group,amount\na,1.5\nb,2.5\na,1.0\nb,3.0\n", encoding="utf-8")
    req = load_goal(DESCRIBE, [other], max_bytes=settings.max_plan_bytes,
                    policy=build_policy(settings, agents=AgentFlags(debuggers=False)),
                    queues=queues_from(settings), store=store_of(settings))
    result = await asyncio.wait_for(client.result(await client.start_run(req)), timeout=180)
    tasks = {t.task_id: t for t in result.tasks}
    assert tasks["skill-1"].status != "completed"
    assert result.skills.deviations["skill-1"] == "major"
    assert "skill-1" in result.skills.fell_back and "describe-column@v1" in result.skills.fell_back
    assert "describe" in tasks, "the planner's plan ran after the skill's"
    assert result.model.calls_by_role.get("planner") == 1
