"""Guideline skills and the offline researcher end to end, against a scripted model server.

A guideline folder written by another tool is imported into the library; a plan's jobless
task matches it. Real workers, sandbox, PostgreSQL and Qdrant run the task: the coder's
prompt carries the guideline (read back from the request the server received), the coder
looks a function up, is answered from the installed package's source, and writes its job,
which runs and is verified. The guideline's use reaches the report and the library's
statistics.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from temporalio.testing import WorkflowEnvironment

from activities.learning.settle import wait_learned
from client.assay import AssayClient
from skills.folders.read import read_skills
from skills.store import SkillStore
from tests.skills.guideline_samples import RULE, guideline_folder
from tests.support.e2e import ROOT, isolated_settings, report_of, store_of, stored_events
from tests.support.fake_anthropic import FakeAnthropic, ToolUse, text_of, tool_of
from tests.support.waiting import wait_for
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import build_policy, queues_from
from workers.pools.builders import SERVED_POOLS, run_pools
from workers.settings import Settings

pytestmark = pytest.mark.integration
DATA = ROOT / "tests" / "data" / "goal" / "measurements.csv"
API_KEY = "sk-ant-test-guidance-NEVER-IN-HISTORY"
ACTION = ("Compare the mean value of group a and group b in measurements.csv and report the "
          "difference of the means")
CODE = """\
import csv
import json
import statistics

with open("measurements.csv", newline="", encoding="utf-8") as handle:
    rows = list(csv.DictReader(handle))
groups = {}
for row in rows:
    groups.setdefault(row["group"], []).append(float(row["value"]))
difference = statistics.fmean(groups["b"]) - statistics.fmean(groups["a"])
with open("metrics.json", "w", encoding="utf-8") as out:
    json.dump({"rows": len(rows), "difference": difference}, out)
"""
LOOKUP = {"target": "statistics.fmean"}


def coder(body: dict[str, Any]) -> ToolUse | None:
    """The coder: first a lookup, then (once answered) its job."""
    if tool_of(body) != "JobOutput":
        return None
    if "def fmean(" not in text_of(body):
        return ToolUse(LOOKUP, name="lookup_docs", usage=None)
    return ToolUse({"code": CODE, "expected_metrics": ["rows", "difference"],
                    "resources": {"memory_mb": 256, "timeout_s": 60}, "confidence": 0.8,
                    "reasoning": "followed the guideline; fmean per its docstring"},
                   usage=None)


def plan_file(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "measurements.csv").write_bytes(DATA.read_bytes())
    plan = folder / "compare.json"
    plan.write_text(json.dumps({"meeting_id": "guided", "decisions": [{
        "task_id": "compare", "priority": "HIGH", "action": ACTION,
        "acceptance_criteria": ["metrics.json gives the difference of the means"],
        "inputs": ["measurements.csv"],
        "checks": [{"metric": "rows", "op": ">", "value": 0}]}]}), encoding="utf-8")
    return plan


@pytest.fixture
async def served(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                 task_queue: str) -> AsyncIterator[tuple[Settings, FakeAnthropic]]:
    (skill,) = read_skills(guideline_folder(tmp_path / "folders"), status="active").skills
    async with SkillStore(fresh_database_url) as store:
        await store.add(skill, by="test")
    with FakeAnthropic() as fake:
        fake.route(coder)
        fake.on_tool("ModelReviewOutput", ToolUse({"verdict": "APPROVE", "confidence": 0.85,
                                                   "warnings": [], "reasoning": "fine"},
                                                  usage=None))
        fake.on_tool("RunAnswer", ToolUse({"answer": "Group b's mean is higher."}, usage=None))
        settings = isolated_settings(tmp_path / "assay", task_queue).model_copy(update={
            "anthropic_api_key": SecretStr(API_KEY), "anthropic_base_url": fake.base_url,
            "docs_lookups": 2})
        stop = asyncio.Event()
        running = asyncio.create_task(run_pools(settings, list(SERVED_POOLS),
                                                database_url=fresh_database_url, stop=stop,
                                                client=dev_env.client))
        yield settings, fake
        stop.set()
        await running


async def test_an_imported_guideline_reaches_the_coder_who_looks_a_function_up_and_writes_its_job(
        dev_env: WorkflowEnvironment, served: tuple[Settings, FakeAnthropic], tmp_path: Path,
        fresh_database_url: str) -> None:
    settings, fake = served
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    req = load_plan(plan_file(tmp_path / "plan"), max_bytes=settings.max_plan_bytes,
                    policy=build_policy(settings), queues=queues_from(settings),
                    store=store_of(settings))
    result = report_of(await asyncio.wait_for(client.result(await client.start_run(req)),
                                              timeout=180))
    assert result.status == "completed", result.status_reason
    (task,) = result.tasks
    skill_id = "welch-comparison-guide@v1"
    assert task.provenance.job_author == "coder:fast"
    assert task.provenance.guidelines == [skill_id]
    assert task.metrics["difference"] > 0

    coded = [r.body for r in fake.requests if tool_of(r.body) == "JobOutput"]
    assert len(coded) == 2 and task.model.calls_by_role["coder"] == 2
    first = coded[0]["messages"][0]["content"]
    assert "## Guideline skills from the library" in first and RULE in first
    assert f"skill {skill_id}, match score" in first
    assert "references/details.md" in first  # named, to ask for; not pasted whole
    assert [t["name"] for t in coded[0]["tools"]] == ["JobOutput", "lookup_docs"]
    looked = coded[1]["messages"]
    assert looked[1]["content"][-1]["input"] == LOOKUP
    (answer,) = looked[2]["content"]
    assert "def fmean(data, weights=None)" in answer["content"]
    assert 'trust="untrusted"' in answer["content"]

    assert result.skills.guided == {"compare": [skill_id]}
    events = [s.event for s in await stored_events(fresh_database_url, result.run_id)]
    (prompted,) = [e for e in events if e.agent_name == "coder" and e.status == "answered"]
    assert prompted.outputs["guidelines"] == [skill_id] and prompted.outputs["calls"] == 2
    assert result.report is not None
    summary = Path(result.report.summary_md).read_text(encoding="utf-8")
    assert f"- `compare`: prompted with guideline skill(s) `{skill_id}`" in summary

    unlearned = await wait_learned(dev_env.client, settings.queue_skills,
                                   [f"{result.run_id}/compare"], limit_s=60)
    assert unlearned == []
    async def counted() -> bool:
        async with SkillStore(fresh_database_url) as store:
            return (await store.get(skill_id)).metrics.used == 1
    await wait_for(counted, timeout=30, what="the guideline's use to be recorded")
    async with SkillStore(fresh_database_url) as store:
        metrics = (await store.get(skill_id)).metrics
    assert (metrics.retrieved, metrics.used, metrics.succeeded) == (1, 1, 1)
