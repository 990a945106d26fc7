"""The pure rules behind agents: plan drafts, verdict merging, code-patch guardrails, choosing."""

from __future__ import annotations

import pytest

from workflows.agents.debugging import (
    Candidate,
    check_code_patch,
    choose,
    code_key,
    group_alike,
    relevant_facts,
)
from workflows.agents.planning import plan_from_draft
from workflows.contracts.execution import Artifact, ExecutionOutcome
from workflows.contracts.plan import JobSpec, PlanError
from workflows.contracts.policy import ReviewPolicy
from workflows.contracts.roles import (
    DataFile,
    EnvironmentFacts,
    PlanDraftOutput,
    PlannedCheck,
    PlannedTask,
)
from workflows.contracts.spend import ModelSpend, Spend, Usage
from workflows.contracts.verdicts import Finding, ReviewVerdict, merge_verdicts

DATA = [DataFile(name="t.csv", path="/d/t.csv", sha256="b" * 64, size=3)]


def planned(tid: str, **fields: object) -> PlannedTask:
    return PlannedTask.model_validate({"task_id": tid, "action": "a",
                                       "acceptance_criteria": ["c"], **fields})


def test_a_draft_becomes_a_plan_with_checks_and_pinned_inputs() -> None:
    draft = PlanDraftOutput(tasks=[
        planned("1", inputs=["t.csv"], checks=[PlannedCheck(metric="p", op="<", value=0.05)]),
        planned("2", dependencies=["1"])])
    plan = plan_from_draft(draft, DATA, name="goal-x")
    first = plan.decisions[0]
    assert plan.meeting_id == "goal-x"
    assert first.resolved_inputs[0].sha256 == "b" * 64
    assert first.checks[0].describe() == "p < 0.05"
    assert first.job is None


def test_the_planners_complexity_label_is_offered_and_reaches_the_plan() -> None:
    schema = PlanDraftOutput.model_json_schema()
    offered = schema["$defs"]["PlannedTask"]["properties"]["complexity"]
    assert "light" in offered["description"] and "full" in offered["description"]
    draft = PlanDraftOutput(tasks=[planned("1", complexity="full"), planned("2")])
    plan = plan_from_draft(draft, DATA, name="g")
    assert [d.complexity for d in plan.decisions] == ["full", None]
    assert "complexity" not in draft.model_dump()["tasks"][1]
    with pytest.raises(ValueError, match="'light' or 'full'"):
        planned("3", complexity="medium")


@pytest.mark.parametrize(("tasks", "problem"), [
    ([planned("1", inputs=["other.csv"])], "not data files of this goal"),
    ([planned("1", dependencies=["9"])], "unknown"),
    ([planned("1", dependencies=["2"]), planned("2", dependencies=["1"])], "cycle"),
    ([planned("1"), planned("1")], "duplicate"),
])
def test_a_bad_draft_is_refused_naming_the_problem(tasks: list[PlannedTask],
                                                    problem: str) -> None:
    with pytest.raises(PlanError) as err:
        plan_from_draft(PlanDraftOutput(tasks=tasks), DATA, name="g")
    assert problem in str(err.value).lower()


def verdict(v: str = "APPROVE", critical: bool = False, confidence: float = 0.9,
            ) -> ReviewVerdict:
    return ReviewVerdict(reviewer="ops", verdict=v, confidence=confidence,  # type: ignore[arg-type]
                         critical=[Finding(code="x", message="bad", severity="critical")]
                         if critical else [])


def test_a_model_can_reject_but_never_approve_a_deterministic_rejection() -> None:
    assert merge_verdicts(verdict(), verdict("REJECT")).verdict == "REJECT"
    assert merge_verdicts(verdict("REJECT"), verdict()).verdict == "REJECT"
    assert merge_verdicts(verdict(critical=True), verdict()).verdict == "REJECT"
    merged = merge_verdicts(verdict(confidence=0.9), verdict(confidence=0.4))
    assert merged.verdict == "APPROVE" and merged.confidence == 0.4
    assert merged.details["model"]["verdict"] == "APPROVE"


def job(code: str, **fields: object) -> JobSpec:
    return JobSpec.model_validate({"code": code, "source": code, "filename": "job.py",
                                   "expected_artifacts": ["out.txt"],
                                   "expected_metrics": ["m"], **fields})


@pytest.mark.parametrize(("changes", "broken"), [
    ({}, "changes nothing"),
    ({"filename": "other.py"}, "renames"),
    ({"expected_artifacts": []}, "expected_artifacts"),
    ({"expected_metrics": []}, "drops expected metrics m"),
    ({"args": {"host": "example.org"}}, "arguments"),
    ({"resources": {"memory_mb": 99999}}, "memory_mb"),
])
def test_a_fix_may_change_code_only(changes: dict[str, object], broken: str) -> None:
    old = job("print(1)\n")
    code = "print(1)\n" if not changes else "print(2)\n"
    new = job(code, **changes)
    problems = check_code_patch(old, new, ReviewPolicy())
    assert any(broken in p for p in problems), problems


def test_a_code_only_fix_passes_and_trailing_space_is_no_change() -> None:
    assert check_code_patch(job("print(1)\n"), job("print(2)\n"), ReviewPolicy()) == []
    assert code_key(job("print(1)  \n\n\n")) == code_key(job("print(1)\n"))


def ran(strategy: str, code: str, *, ok: bool = True, score: float = 1.0,
        confidence: float = 0.5) -> Candidate:
    c = Candidate(strategy=strategy, job=job(code), diagnosis="d",  # type: ignore[arg-type]
                  confidence=confidence)
    c.outcome = ExecutionOutcome(
        outcome="succeeded" if ok else "nonzero_exit", metrics={"m": score},
        artifacts=[Artifact(name="out.txt", size=1, sha256="c" * 64)])
    return c


def test_agreeing_results_beat_a_surer_lone_fix() -> None:
    best = choose([ran("direct", "a", score=0.5, confidence=0.99),
                   ran("introspect", "b", score=0.8000001),
                   ran("diagnostic", "c", score=0.8)])
    assert best is not None and best.strategy == "introspect"


def test_only_successful_fixes_are_chosen() -> None:
    assert choose([ran("direct", "a", ok=False)]) is None
    best = choose([ran("direct", "a", ok=False, confidence=1.0), ran("introspect", "b")])
    assert best is not None and best.strategy == "introspect"


def test_alike_code_is_grouped_and_counts_as_agreement() -> None:
    groups = group_alike([ran("direct", "x\n"), ran("introspect", "x  \n"),
                          ran("diagnostic", "y\n", confidence=0.9)])
    assert [g.agreeing for g in groups] == [["direct", "introspect"], ["diagnostic"]]
    for g in groups:
        g.outcome = ran(g.strategy, "z").outcome
    best = choose(groups)
    assert best is not None and best.agreeing == ["direct", "introspect"]


def test_spend_sums_per_role_and_across_tasks() -> None:
    usage = Usage(input_tokens=10, output_tokens=2, cost_usd=0.5)
    task = ModelSpend().add(Spend(role="coder", calls=2, usage=usage))
    run = ModelSpend().add(Spend(role="planner", calls=1, usage=usage)).merge(task).merge(task)
    assert run.calls == 5 and run.calls_by_role == {"planner": 1, "coder": 4}
    assert run.by_role["coder"].input_tokens == 20
    assert run.usage.cost_usd == pytest.approx(1.5)


def test_environment_facts_keep_only_the_packages_the_job_uses() -> None:
    facts = EnvironmentFacts(python="3.11.2", packages={
        "numpy": "2.0.0", "scikit-learn": "1.5.0", "py-spy": "0.4.3", "typing_extensions": "4"})
    code = "import numpy as np\nfrom typing_extensions import Self\nfrom . import x\nimport os\n"
    kept = relevant_facts(job(code, requirements=["scikit-learn>=1.4"]), facts)
    assert kept.packages == {"numpy": "2.0.0", "scikit-learn": "1.5.0",
                             "typing_extensions": "4"}
    assert kept.python == "3.11.2"
    assert relevant_facts(job("this is not python("), facts).packages == {}
