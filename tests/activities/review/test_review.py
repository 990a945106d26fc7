"""The review panel as the workflow sees it: the example plan passes all three reviewers,
the activities run under Temporal's activity environment, and the gate needs all three."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.review.common import Findings, confidence, verdict
from activities.review.panel import InfrastructureReviewer, review_ops, review_quality_safety
from client.assay import DATA_CONVERTER
from workers.intake.planfile import load_supplied_plan
from workflows.contracts.plan import Decision, JobSpec
from workflows.contracts.verdicts import Finding, ReviewInput, ReviewVerdict, panel_approves

PLAN_FILE = Path(__file__).resolve().parents[3] / "examples" / "iris" / "plan.json"
DECISIONS = {d.task_id: d
             for d in load_supplied_plan(PLAN_FILE, max_bytes=1_500_000).plan.decisions}


def artifacts(task_id: str) -> list[str]:
    job = DECISIONS[task_id].job
    return [f"deps/{task_id}/{name}" for name in (job.expected_artifacts if job else [])]


def review_input(decision: Decision) -> ReviewInput:
    """What the TaskWorkflow hands the reviewers (dependency artifacts as deps/<id>/<name>)."""
    assert decision.job is not None
    return ReviewInput(
        task_id=decision.task_id, action=decision.action,
        acceptance_criteria=decision.acceptance_criteria, checks=decision.checks,
        job=decision.job, input_names=[i.name for i in decision.resolved_inputs],
        dependency_artifacts=[a for dep in decision.dependencies for a in artifacts(dep)])


@pytest.fixture(scope="module")
def infrastructure(tmp_path_factory: pytest.TempPathFactory) -> InfrastructureReviewer:
    return InfrastructureReviewer(tmp_path_factory.mktemp("work"), sys.executable)


@pytest.mark.parametrize(("task_id", "reviewer"), [
    pytest.param(task_id, reviewer, id=f"task{task_id}-{reviewer}")
    for task_id in DECISIONS for reviewer in ("ops", "quality_safety", "infrastructure")])
async def test_example_jobs_approve(task_id: str, reviewer: str,
                                    infrastructure: InfrastructureReviewer) -> None:
    req = review_input(DECISIONS[task_id])
    env = ActivityEnvironment()
    activity = {"ops": review_ops, "quality_safety": review_quality_safety,
                "infrastructure": infrastructure.review_infrastructure}[reviewer]
    result = await env.run(activity, req)
    assert result.reviewer == reviewer
    assert result.critical == [], result.reasoning
    assert result.verdict == "APPROVE"


async def test_example_plan_passes_the_gate(
        infrastructure: InfrastructureReviewer) -> None:
    env = ActivityEnvironment()
    for task_id, decision in DECISIONS.items():
        req = review_input(decision)
        verdicts = [await env.run(review_ops, req), await env.run(review_quality_safety, req),
                    await env.run(infrastructure.review_infrastructure, req)]
        assert panel_approves(verdicts), (task_id, [v.reasoning for v in verdicts])


async def test_activities_reject_hostile_jobs_under_the_activity_environment(
        infrastructure: InfrastructureReviewer) -> None:
    code = "import os\nimport assay_missing_pkg\nos.system('rm -rf /')\n"
    job = JobSpec(code=code, expected_metrics=["m"]).model_copy(
        update={"source": code, "filename": "job.py"})
    req = ReviewInput(task_id="t", action="a", job=job)
    env = ActivityEnvironment()
    safety = await env.run(review_quality_safety, req)
    infra = await env.run(infrastructure.review_infrastructure, req)
    ops = await env.run(review_ops, req)
    assert (safety.verdict, safety.critical[0].line) == ("REJECT", 3)
    assert infra.verdict == "REJECT" and "assay_missing_pkg" in infra.critical[0].message
    assert ops.verdict == "APPROVE"
    assert not panel_approves([ops, safety, infra])


def test_verdicts_survive_the_data_converter() -> None:
    findings = Findings()
    findings.start("no_network")
    findings.fail("no_network", "network_import", "imports socket", 3)
    original = verdict("quality_safety", findings, "the job's source",
                       details={"packages": {"numpy": None}, "disk_available_mb": 10})
    payloads = DATA_CONVERTER.payload_converter.to_payloads([original])
    [decoded] = DATA_CONVERTER.payload_converter.from_payloads(payloads, [ReviewVerdict])
    assert decoded == original


def approve(reviewer: str, *, critical: list[Finding] | None = None) -> ReviewVerdict:
    return ReviewVerdict.model_validate({"reviewer": reviewer, "verdict": "APPROVE",
                                         "confidence": 0.95, "critical": critical or []})


def test_panel_approves_only_with_three_clean_approvals() -> None:
    panel = [approve("ops"), approve("quality_safety"), approve("infrastructure")]
    assert panel_approves(panel)
    rejected = panel[2].model_copy(update={"verdict": "REJECT"})
    assert not panel_approves([*panel[:2], rejected])
    assert not panel_approves(panel[:2])
    assert not panel_approves([approve("ops"), approve("ops"), approve("quality_safety")])
    flagged = approve("ops", critical=[Finding(code="x", message="y", severity="critical")])
    assert not panel_approves([flagged, *panel[1:]])


def test_confidence_is_deterministic_from_the_findings() -> None:
    findings = Findings()
    assert confidence(findings) == 0.95
    for n in range(12):
        findings.warn("c", f"w{n}", "warning")
    assert confidence(findings) == 0.5
    findings.fail("c", "x", "critical")
    assert confidence(findings) == 0.9
    findings.fail("c", "y", "critical")
    assert confidence(findings) == pytest.approx(0.93)
