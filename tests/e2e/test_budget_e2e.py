"""A strict run budget end to end: ten coded tasks at once against a cap that holds a few.

Real workers (the agents pool with its budget ledger in PostgreSQL), the real SDK against the
scripted model server, the real sandbox. Every task needs the coder; each coder call spends
4,000 tokens and reserves its prompt estimate plus 16,384 tokens of output. The run's cap of
40,000 tokens pays for some; the ledger refuses the rest before they reach the server, those
tasks end ``deferred`` saying the budget stopped them, and the run spends within its cap.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from temporalio.testing import WorkflowEnvironment

from activities.llm.ledger import BudgetLedger
from client.assay import AssayClient
from tests.support.e2e import isolated_settings, pools_serving, report_of, store_of
from tests.support.fake_anthropic import FakeAnthropic, ToolUse, tool_of, usage
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import AgentFlags, build_policy, queues_from
from workers.settings import Settings

pytestmark = pytest.mark.integration
CAP = 40_000
PER_CALL = usage(input_tokens=1000, output_tokens=3000)
CODE = ("import json\n"
        "json.dump({'n': 1}, open('metrics.json', 'w'))\n")
JOB = {"code": CODE, "expected_metrics": ["n"], "confidence": 0.9,
       "resources": {"memory_mb": 128, "timeout_s": 60}, "reasoning": "writes one metric"}


def ten_tasks(folder: Path) -> Path:
    """A plan of ten independent tasks with no job: each needs the coder."""
    decisions = [{"task_id": f"t{n}", "priority": "HIGH", "owner": "analyst",
                  "action": f"Write the number one as metric n (task {n})",
                  "rationale": "a coded task", "acceptance_criteria": ["metric n is 1"],
                  "dependencies": [], "checks": [{"metric": "n", "op": "==", "value": 1}]}
                 for n in range(10)]
    plan = folder / "pending_actions.json"
    plan.write_text(json.dumps({"meeting_id": "budget-ten", "context": "ten coded tasks",
                                "decisions": decisions}))
    return plan


def answer(body: dict[str, Any]) -> ToolUse | None:
    """The output processor, as a careful model answers: each stopped task is a caveat."""
    if tool_of(body) != "RunAnswer":
        return None
    prompt = body["messages"][0]["content"]
    stopped = re.findall(r"## Task (t\d+)\n\n- action: [^\n]*\n- status: deferred",
                         prompt if isinstance(prompt, str) else json.dumps(prompt))
    return ToolUse({"answer": "Every task that ran wrote n = 1.", "caveats": [
        f"task {t} deferred: the budget ledger refused its coder" for t in stopped]},
                   usage=PER_CALL)


@pytest.fixture
async def served(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                 task_queue: str) -> AsyncIterator[tuple[Settings, FakeAnthropic]]:
    with FakeAnthropic() as fake:
        fake.on_tool("JobOutput", ToolUse(JOB, usage=PER_CALL))
        fake.route(answer)
        settings = isolated_settings(tmp_path / "assay", task_queue).model_copy(update={
            "anthropic_api_key": SecretStr("sk-ant-test-budget"),
            "anthropic_base_url": fake.base_url})
        async with pools_serving(settings, fresh_database_url, dev_env.client):
            yield settings, fake


async def test_ten_parallel_tasks_spend_within_the_cap_and_the_rest_are_stopped_by_it(
        dev_env: WorkflowEnvironment, served: tuple[Settings, FakeAnthropic],
        tmp_path: Path, fresh_database_url: str) -> None:
    settings, fake = served
    flags = AgentFlags(enabled=True, budget_tokens=CAP, model_review=False, debuggers=False)
    policy = build_policy(settings, agents=flags, max_parallel=10, memory=False, skills=False)
    req = load_plan(ten_tasks(tmp_path), max_bytes=settings.max_plan_bytes, policy=policy,
                    queues=queues_from(settings), store=store_of(settings))
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    run_id = await client.start_run(req, again=True)
    result = await asyncio.wait_for(client.result(run_id), timeout=300)
    report = report_of(result)

    statuses = {t.task_id: t.status for t in report.tasks}
    completed = [t for t in report.tasks if t.status == "completed"]
    stopped = [t for t in report.tasks if t.status == "deferred"]
    assert len(completed) + len(stopped) == 10, statuses
    assert completed and stopped, statuses
    assert all("budget ledger refused" in t.status_reason for t in stopped)
    coder_calls = [r for r in fake.requests if tool_of(r.body) == "JobOutput"]
    assert len(coder_calls) == len(completed)  # a refused call never reached the server
    answered = [r for r in fake.requests if tool_of(r.body) == "RunAnswer"]
    assert len(answered) <= 1  # the run's answer, if the ledger had room for it
    spent = report.model.usage.total_tokens
    assert spent == 4000 * (len(completed) + len(answered))
    async with BudgetLedger(fresh_database_url) as ledger:
        standing = await ledger.standing(report.run_id)
    assert standing is not None
    assert standing.spent_tokens == spent and standing.reserved_tokens == 0
    assert spent <= CAP  # within the cap: each reservation covered its call's real usage
    assert result.report is not None  # the Markdown report says the budget stopped them
    summary = Path(result.report.summary_md).read_text(encoding="utf-8")
    # each stopped task says so in its section and in the answer's caveats
    assert summary.count("budget ledger refused") == 2 * len(stopped)
    for task in stopped:
        assert f"- task {task.task_id} deferred: " in summary
