"""Digests of finished tasks for the agents after them: what they keep, and their bounds."""

from __future__ import annotations

from typing import Any

from tests.workflows.study.factories import decision as planned
from tests.workflows.study.factories import hypothesis, plan
from workflows.contracts.context import DIGEST_ITEMS, DIGEST_VALUE_CHARS
from workflows.contracts.execution import Artifact, CheckResult, ExecutionOutcome
from workflows.contracts.plan import Check, Decision, Plan
from workflows.contracts.results import TaskResult
from workflows.contracts.study import StudyContext
from workflows.research.context import (
    UPSTREAM_BUDGET,
    UPSTREAM_TAIL,
    UPSTREAM_TAIL_MIN,
    UPSTREAM_TASKS,
    study_facts,
    task_digest,
    upstream,
    wanted_metrics,
)


def result(tid: str, *, metrics: dict[str, Any] | None = None, artifacts: int = 1,
           stdout: str = "") -> TaskResult:
    check = CheckResult(check=Check(metric="rows", op="==", value=3), passed=False, actual=2)
    return TaskResult(
        task_id=tid, priority="HIGH", action=f"do {tid}", status="completed",
        status_reason="verified", metrics=metrics or {"rows": 2}, checks=[check],
        artifacts=[Artifact(name=f"out-{i}.txt", size=1, path=f"/store/{tid}/out-{i}.txt",
                            sha256=f"{i:064d}") for i in range(artifacts)],
        execution=ExecutionOutcome(outcome="succeeded", stdout_tail=stdout))


def decision(deps: list[str]) -> Decision:
    return Decision.model_validate({"task_id": "z", "priority": "HIGH", "action": "use them",
                                    "acceptance_criteria": ["done"], "dependencies": deps})


def test_a_digest_keeps_the_verified_facts_and_where_the_files_are() -> None:
    digest = task_digest(result("a", stdout="x" * 50 + "the end"), tail=7)
    assert digest.metrics == {"rows": 2} and digest.status == "completed"
    assert digest.checks == ["rows == 3: fail"]
    assert digest.stdout_tail == "the end"
    assert [(f.task_id, f.name, f.path) for f in digest.files] == [
        ("a", "out-0.txt", "/store/a/out-0.txt")]


def test_a_digest_is_bounded_however_large_the_result() -> None:
    metrics: dict[str, Any] = {f"m{i}": i for i in range(100)}
    metrics["m0"] = list(range(10_000))
    digest = task_digest(result("a", metrics=metrics, artifacts=300), tail=100)
    assert len(digest.metrics) == DIGEST_ITEMS
    assert isinstance(digest.metrics["m0"], str)
    assert len(digest.metrics["m0"]) == DIGEST_VALUE_CHARS + 1 and digest.metrics["m1"] == 1
    assert len(digest.artifacts) == len(digest.files) == DIGEST_ITEMS


def test_upstream_follows_the_dependencies_that_finished() -> None:
    results = {t: result(t, stdout="y" * 5000) for t in ("a", "b", "c")}
    digests = upstream(decision(["c", "a", "missing"]), results)
    assert [d.task_id for d in digests] == ["c", "a"]
    assert all(len(d.stdout_tail) == UPSTREAM_TAIL for d in digests)
    assert upstream(decision([]), results) == []


def test_many_dependencies_share_the_output_budget() -> None:
    many = [f"t{i}" for i in range(UPSTREAM_TASKS + 30)]
    results = {t: result(t, stdout="y" * 5000) for t in many}
    digests = upstream(decision(many), results)
    assert len(digests) == UPSTREAM_TASKS
    tail = max(UPSTREAM_TAIL_MIN, UPSTREAM_BUDGET // UPSTREAM_TASKS)
    assert {len(d.stdout_tail) for d in digests} == {tail}
    assert sum(len(d.model_dump_json()) for d in digests) < 60_000


def test_the_metrics_checks_and_hypotheses_name_are_kept_and_the_cut_is_said() -> None:
    metrics = {f"m{i:02d}": i for i in range(24)}
    checks = [CheckResult(check=Check(metric=m, op=">", value=0), passed=True, actual=1)
              for m in ("m22", "m23")]
    task = result("a", metrics=metrics).model_copy(update={"checks": checks})
    digest = task_digest(task, tail=0)
    assert {"m22", "m23"} <= set(digest.metrics) and len(digest.metrics) == DIGEST_ITEMS
    assert digest.omitted == ["… 4 more metrics not shown: m18, m19, m20, m21"]
    wanted = task_digest(result("b", metrics=metrics), tail=0, wanted=frozenset({"m21.ci_low"}))
    assert "m21" in wanted.metrics and "m19" in wanted.omitted[0]


def test_the_key_metric_and_hypotheses_tests_are_wanted() -> None:
    plan = Plan.model_validate({
        "metric": {"name": "cv_r2", "direction": "maximize"},
        "decisions": [{"task_id": "fit", "priority": "HIGH", "action": "fit",
                       "acceptance_criteria": ["done"], "hypothesis": "H1"}],
        "hypotheses": [{"id": "H1", "statement": "bmi matters",
                        "test": {"metric": "bmi_coef.ci_low", "op": ">", "threshold": 0}}]})
    assert wanted_metrics(plan, None) == {"cv_r2", "bmi_coef.ci_low"}


def test_dependencies_past_the_bound_are_named_in_the_last_digest() -> None:
    many = [f"t{i}" for i in range(UPSTREAM_TASKS + 2)]
    digests = upstream(decision(many), {t: result(t) for t in many})
    assert digests[-1].omitted == [f"… 2 more dependency digests not shown: "
                                   f"t{UPSTREAM_TASKS}, t{UPSTREAM_TASKS + 1}"]


def test_a_run_of_its_own_has_no_study_facts() -> None:
    assert study_facts(None, plan([planned("a")])) == (None, [])


def test_a_cycle_s_study_facts_name_the_hypotheses_it_tests_without_the_earlier_cycles(
        ) -> None:
    from tests.histories.capture.study_cycle import study

    check = {"metric": "auc", "op": ">=", "value": 0.8}
    cycle_plan = Plan.model_validate({
        "decisions": [planned("boost", hypothesis="H3", checks=[check]),
                      planned("refit", hypothesis="H1")],
        "hypotheses": [hypothesis("H1").model_dump(),  # the tree's, linked again
                       {"id": "H3", "parent": "H1", "statement": "boosting reaches 0.8",
                        "test": {"check": "auc", "task_id": "boost"}}]})
    facts, testing = study_facts(study(), cycle_plan)
    assert isinstance(facts, StudyContext)
    assert (facts.cycle, facts.previous, facts.carried) == (2, [], [])
    assert [h.id for h in facts.tree.hypotheses] == ["H1", "H2", "H3"]
    assert facts.tree.get("H3").test.describe() == "check auc of task boost"
    assert testing == ["H1", "H3"]  # in the tree's order; H2 was decided before
