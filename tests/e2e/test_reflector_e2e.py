"""The reflector end to end: a failure the rule table cannot name, fixed by an argument change.

Real workers, sandbox and SDK against the scripted Messages API server. The plan's job fails
with an exception no rule names unless its ``tolerance`` argument is loosened; reflection's
rule table says ``unknown``, the reflector proposes ``args.tolerance = 1e-6``, the patch is
guarded and scored like any rule's (0.90: retry), reviewed again, and the task completes.
The exchange is recorded, and a re-run replays it with the server gone. Without a model
nothing changes: the same failure ends the task, and no model is asked.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.support.e2e import (
    isolated_settings,
    pools_serving,
    report_of,
    store_of,
    stored_events,
)
from tests.support.fake_anthropic import FakeAnthropic, ToolUse, tool_of
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import AgentFlags, build_policy, queues_from
from workers.settings import Settings
from workflows.contracts.results import RunReport

pytestmark = pytest.mark.integration
CODE = """\
import argparse
import json

parser = argparse.ArgumentParser()
parser.add_argument("--tolerance", type=float, required=True)
tolerance = parser.parse_args().tolerance
root, step = 1.0, 0
for step in range(50):
    root = (root + 2.0 / root) / 2
if tolerance < 1e-9:
    raise RuntimeError(f"no convergence at tolerance {tolerance:g} after {step + 1} iterations")
print(f"root {root:.7f} at tolerance {tolerance:g}")
with open("metrics.json", "w") as out:
    json.dump({"root": root}, out)
"""
REFLECTION = {"root_cause": "invalid_value", "likely_fix": "loosen the tolerance",
              "reason": "double precision cannot meet 1e-12; 1e-6 is ample for the check",
              "changes": [{"field": "args.tolerance", "value": 1e-6,
                           "reason": "above what double precision reaches"}]}


def solver_plan(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    decision = {"task_id": "solve", "priority": "HIGH", "owner": "analyst",
                "action": "Find the square root of two by Newton's method",
                "rationale": "a job that fails until its tolerance is loosened",
                "acceptance_criteria": ["root reported"], "dependencies": [],
                "checks": [{"metric": "root", "op": ">", "value": 1.414}],
                "job": {"code": CODE, "args": {"tolerance": 1e-12},
                        "expected_metrics": ["root"],
                        "resources": {"memory_mb": 128, "timeout_s": 60}}}
    plan = folder / "pending_actions.json"
    plan.write_text(json.dumps({"meeting_id": "solver", "context": "one solver task",
                                "decisions": [decision]}))
    return plan


@pytest.fixture
async def served(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                 task_queue: str) -> AsyncIterator[tuple[Settings, FakeAnthropic]]:
    with FakeAnthropic() as fake:
        fake.on_tool("ReflectorOutput", ToolUse(REFLECTION))
        fake.on_tool("RunAnswer", ToolUse({"answer": "The root of 2 is 1.4142.",
                                           "analysis": "from metrics.json", "caveats": []}))
        settings = isolated_settings(tmp_path / "assay", task_queue).model_copy(update={
            "anthropic_api_key": SecretStr("sk-ant-test-reflector"),
            "anthropic_base_url": fake.base_url})
        async with pools_serving(settings, fresh_database_url, dev_env.client):
            yield settings, fake


async def run_plan(dev_env: WorkflowEnvironment, settings: Settings, folder: Path,
                   flags: AgentFlags) -> RunReport:
    policy = build_policy(settings, agents=flags, memory=False, skills=False)
    req = load_plan(solver_plan(folder), max_bytes=settings.max_plan_bytes, policy=policy,
                    queues=queues_from(settings), store=store_of(settings))
    client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
    run_id = await client.start_run(req, again=True)
    return report_of(await asyncio.wait_for(client.result(run_id), timeout=240))


async def test_an_unnamed_failure_is_fixed_by_the_reflectors_patch(
        dev_env: WorkflowEnvironment, served: tuple[Settings, FakeAnthropic],
        tmp_path: Path, fresh_database_url: str) -> None:
    settings, fake = served
    recording = tmp_path / "reflector.jsonl"
    flags = AgentFlags(enabled=True, model_review=False, debuggers=False, record=recording)
    report = await run_plan(dev_env, settings, tmp_path, flags)

    (task,) = report.tasks
    assert task.status == "completed", task.status_reason
    assert task.metrics["root"] == pytest.approx(2 ** 0.5)
    (patch,) = task.provenance.patches
    assert patch.outcome == "applied" and patch.root_cause == "invalid_value"
    assert [(c.field, c.old_value, c.new_value) for c in patch.changes] == [
        ("args.tolerance", 1e-12, 1e-6)]
    assert len(task.provenance.reflection_ids) == 2  # the rule table's note, the reflector's
    assert task.provenance.execution.attempts == 2
    # the reflector, then the output processor's answer to the plan run
    assert [tool_of(r.body) for r in fake.requests] == ["ReflectorOutput", "RunAnswer"]
    events = [s.event for s in await stored_events(fresh_database_url, report.run_id)]
    notes = [e.outputs for e in events if e.agent_name == "reflector"
             and e.event_type == "agent_call" and "root_cause" in e.outputs]
    assert [(n["root_cause"], n["source"]) for n in notes] == [("unknown", "none"),
                                                               ("invalid_value", "model")]

    # recorded like every role: a re-run replays the reflector's answer with no server
    fake.stop()
    replay = AgentFlags(model_review=False, debuggers=False, replay=recording)
    again = await run_plan(dev_env, settings, tmp_path / "again", replay)
    (retried,) = again.tasks
    assert retried.status == "completed", retried.status_reason
    assert retried.provenance.patches[0].changes == patch.changes
    assert retried.model.calls == task.model.calls == 1


async def test_without_a_model_the_rule_tables_verdict_stands(
        dev_env: WorkflowEnvironment, served: tuple[Settings, FakeAnthropic],
        tmp_path: Path) -> None:
    settings, fake = served
    report = await run_plan(dev_env, settings, tmp_path, AgentFlags(enabled=False))

    (task,) = report.tasks
    assert task.status == "failed", task.status_reason
    assert "diagnosis: unknown" in task.status_reason
    assert "no convergence at tolerance 1e-12" in task.status_reason
    assert task.provenance.patches == [] and len(task.provenance.reflection_ids) == 1
    assert fake.requests == []
