"""``examples/hand-debug`` replayed offline: a goal whose first job would fail, answered by hand.

Every model answer comes from the example's recordings (written by hand through a local
Messages API endpoint, reading only each request); no model server exists here. The run
plans one logistic regression on scikit-learn's Wisconsin breast cancer table; the coded job
has an input check that pandas 3 defeats (it wants the text column ``diagnosis`` to have dtype
``object``; pandas 3 reads it as ``str``). With model reviewers (``recording.jsonl``) the
infrastructure reviewer, shown the environment's packages, rejects it before it runs; the
reflector is asked (no change of settings cures it) and the coder revises the job, which runs
once. Without them (``no-model-review.jsonl``, ``--no-model-review``) the job stops in that
check, the rule table cannot name it, the reflector is asked and then the three debuggers,
whose fix runs and is verified. Jobs run in the science environment the recordings were made
with (pinned in the example's ``environments/science.txt``). The answer's numbers are checked
against statsmodels' GLM (a binomial family, fitted by IRLS: not the job's Logit) in that
environment's interpreter.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.support.e2e import (
    ROOT,
    isolated_settings,
    pools_serving,
    report_of,
    store_of,
    stored_events,
)
from workers.intake.goalfile import load_goal
from workers.intake.runpolicy import AgentFlags, build_policy, queues_from
from workflows.contracts.results import RunReport

pytestmark = pytest.mark.integration
EXAMPLE = ROOT / "examples" / "hand-debug"
GOAL = (EXAMPLE / "goal.txt").read_text(encoding="utf-8").strip()
INDEPENDENT = """
import json, sys
import numpy as np, pandas as pd, statsmodels.api as sm
table = pd.read_csv(sys.argv[1])
y = (table["diagnosis"] == "malignant").astype(float)
z = {c: (table[c] - table[c].mean()) / table[c].std(ddof=1)
     for c in ("mean radius", "mean texture")}
X = sm.add_constant(pd.DataFrame({"radius": z["mean radius"], "texture": z["mean texture"]}))
fit = sm.GLM(y, X, family=sm.families.Binomial()).fit()
ci = np.exp(fit.conf_int(alpha=0.05))
print(json.dumps({"rows": len(table), "malignant": int(y.sum()),
                  "radius": [float(np.exp(fit.params["radius"])), *map(float, ci.loc["radius"])],
                  "texture": [float(np.exp(fit.params["texture"])),
                              *map(float, ci.loc["texture"])]}))
"""


async def replayed(env: WorkflowEnvironment, database_url: str, tmp_path: Path,
                   task_queue: str, environments: Path, *, model_review: bool = True,
                   ) -> RunReport:
    """The example's goal, as its README runs it, with every answer from its recording."""
    settings = isolated_settings(tmp_path / "assay", task_queue).model_copy(update={
        "environments_root": environments, "environments_dir": EXAMPLE / "environments"})
    recording = EXAMPLE / ("recording.jsonl" if model_review else "no-model-review.jsonl")
    policy = build_policy(settings, policy_file=EXAMPLE / "policy.json",
                          agents=AgentFlags(replay=recording,
                                            model_review=None if model_review else False))
    req = load_goal(GOAL, [EXAMPLE / "breast_cancer.csv"], max_bytes=settings.max_plan_bytes,
                    policy=policy, queues=queues_from(settings), store=store_of(settings))
    async with pools_serving(settings, database_url, env.client):
        client = AssayClient(env.client, task_queue=settings.queue_orchestration)
        run_id = await client.start_run(req, again=True)
        return report_of(await asyncio.wait_for(client.result(run_id), timeout=840))


@pytest.mark.timeout(900)
async def test_shown_the_packages_the_infrastructure_reviewer_stops_the_job_before_it_fails(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str, shared_environments: Path) -> None:
    result = await replayed(dev_env, fresh_database_url, tmp_path, task_queue,
                            shared_environments)

    assert result.status == "completed", result.status_reason
    (task,) = result.tasks
    assert task.status == "completed", task.status_reason
    assert not task.provenance.job_author.startswith("debugger:")
    events = [s.event for s in await stored_events(fresh_database_url, result.run_id)]
    answered = {e.agent_name for e in events
                if e.event_type == "agent_call" and e.status == "answered"}
    assert "reflector" in answered and "coder" in answered, answered
    assert not {"debugger_direct", "debugger_introspect", "debugger_diagnostic"} & answered
    ran = [e for e in events if e.event_type == "code_exec" and e.agent_name == "sandbox"]
    assert not [e for e in ran if e.status == "nonzero_exit"]  # the failing job never ran
    assert result.model.calls_by_role["coder"] == 2  # the job, then its revision
    assert result.model.calls_by_role["reviewer_infrastructure"] == 2
    check_numbers(result, shared_environments)
    assert result.answer is not None
    assert "41.5 (95 % CI 20.6 to 83.6)" in result.answer.answer


@pytest.mark.timeout(900)
async def test_without_model_review_the_job_fails_and_the_reflector_and_debuggers_fix_it(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str, shared_environments: Path) -> None:
    result = await replayed(dev_env, fresh_database_url, tmp_path, task_queue,
                            shared_environments, model_review=False)

    assert result.status == "completed", result.status_reason
    (task,) = result.tasks
    assert task.status == "completed", task.status_reason
    assert task.provenance.job_author.startswith("debugger:")
    assert task.provenance.execution.attempts >= 2
    events = [s.event for s in await stored_events(fresh_database_url, result.run_id)]
    answered = {e.agent_name for e in events
                if e.event_type == "agent_call" and e.status == "answered"}
    assert {"reflector", "debugger_direct", "debugger_introspect",
            "debugger_diagnostic"} <= answered, answered
    assert not any(name.startswith("reviewer_") for name in answered)
    (tier,) = [e for e in events if e.event_type == "checkpoint"
               and (e.status or "").startswith("tier:")]
    assert tier.status == "tier:full"  # its job installs requirements: debuggers at once
    assert any("requirement" in reason for reason in tier.outputs["reasons"]), tier.outputs
    failed = [e for e in events if e.event_type == "code_exec" and e.agent_name == "sandbox"
              and e.status == "nonzero_exit"]
    assert failed and "has dtype str" in failed[0].outputs["stderr_tail"]
    assert any(e.agent_name == "debugger_diagnostic" and e.event_type == "code_exec"
               for e in events)
    assert result.model.calls == result.model.calls_by_role["planner"] + sum(
        t.model.calls for t in result.tasks) + result.model.calls_by_role["plan_reviewer"] \
        + result.model.calls_by_role["output_processor"]
    check_numbers(result, shared_environments)


def check_numbers(result: RunReport, environments: Path) -> None:
    """The verified numbers, against an independent fit in the same science environment."""
    (task,) = result.tasks
    science = task.provenance.environment
    assert science is not None and science.name == "science"
    python = environments / science.digest / "bin" / "python"
    done = subprocess.run([str(python), "-c", INDEPENDENT, str(EXAMPLE / "breast_cancer.csv")],
                          capture_output=True, text=True, timeout=120, check=True)
    expected = json.loads(done.stdout)
    metrics = task.metrics
    assert (metrics["rows"], metrics["n_malignant"]) == (expected["rows"],
                                                         expected["malignant"]) == (569, 212)
    for name, key in (("odds_ratio_radius", "radius"), ("odds_ratio_texture", "texture")):
        estimate = metrics[name]
        assert isinstance(estimate, dict)
        value, low, high = expected[key]
        assert estimate["value"] == pytest.approx(value, rel=1e-6)
        assert estimate["ci"] == pytest.approx([low, high], rel=1e-6)
    assert expected["radius"] == pytest.approx([41.483, 20.581, 83.614], abs=1e-3)
