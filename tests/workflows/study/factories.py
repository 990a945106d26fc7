"""Small builders of cycle results for the study tests: reports, outcomes, summaries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from workflows.contracts.hypotheses import Hypothesis, HypothesisTest, HypothesisTree, Verdict
from workflows.contracts.plan import Plan
from workflows.contracts.results import RunReport, TaskResult
from workflows.contracts.study import CycleSummary, TaskOutcome

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def hypothesis(hid: str, parent: str | None = None, metric: str = "auc", op: str = ">=",
               threshold: Any = 0.8, **fields: Any) -> Hypothesis:
    return Hypothesis.model_validate({
        "id": hid, "parent": parent, "statement": f"claim {hid}",
        "test": {"metric": metric, "op": op, "threshold": threshold}, **fields})


def tree(*items: Hypothesis) -> HypothesisTree:
    return HypothesisTree(hypotheses=list(items))


def outcome(task_id: str, status: str = "completed", hypothesis: str | None = None,
            **metrics: Any) -> TaskOutcome:
    return TaskOutcome.model_validate({"task_id": task_id, "status": status,
                                       "hypothesis": hypothesis, "metrics": metrics,
                                       "reason": "" if status == "completed" else "exit 1"})


def summary(cycle: int, *tasks: TaskOutcome, verdicts: list[Verdict] | None = None,
            key_value: float | None = None, cost: float = 0.0,
            key_ci: tuple[float, float] | None = None) -> CycleSummary:
    return CycleSummary(cycle=cycle, run_id=f"run-{cycle}", plan_sha256="0" * 64,
                        status="completed", tasks=list(tasks), tasks_total=len(tasks),
                        unfinished=sum(t.status != "completed" for t in tasks),
                        verdicts=verdicts or [], key_value=key_value, cost_usd=cost,
                        key_ci=key_ci)


def verdict(hid: str, status: str, settled: bool = True) -> Verdict:
    return Verdict.model_validate({"hypothesis": hid, "status": status, "settled": settled,
                                   "reason": f"{hid} {status}: auc = 0.7 (task 1)"})


def metric_test(metric: str, op: str, threshold: Any, task_id: str | None = None) -> HypothesisTest:
    return HypothesisTest.model_validate({"metric": metric, "op": op, "threshold": threshold,
                                          "task_id": task_id})


def plan(decisions: list[dict[str, Any]], **fields: Any) -> Plan:
    return Plan.model_validate({"decisions": decisions, **fields})


def decision(task_id: str, **fields: Any) -> dict[str, Any]:
    return {"task_id": task_id, "priority": "MEDIUM", "action": f"do {task_id}",
            "acceptance_criteria": ["done"], **fields}


def result(task_id: str, status: str = "completed", reason: str = "", **fields: Any,
           ) -> TaskResult:
    return TaskResult.model_validate({
        "task_id": task_id, "status": status, "status_reason": reason or status,
        "action": f"do {task_id}", "started_at": T0,
        "finished_at": T0 + timedelta(seconds=30), **fields})


def report(tasks: list[TaskResult], the_plan: Plan | None = None, cost: float = 0.0,
           run_id: str = "run-1") -> RunReport:
    return RunReport.model_validate({
        "run_id": run_id, "plan_name": "p", "plan_sha256": "a" * 64, "status": "completed",
        "timestamp": "t", "started_at": T0, "finished_at": T0 + timedelta(minutes=2),
        "tasks": tasks, "plan": the_plan,
        "model": {"calls": 1, "usage": {"cost_usd": cost}}})
