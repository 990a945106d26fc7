"""Plan schema and dependency-graph validation (pure; no server)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from workflows.contracts.plan import Plan, PlanError, check_graph


def decision(tid: Any, deps: list[Any] | None = None, priority: str = "MEDIUM",
             **extra: Any) -> dict[str, Any]:
    return {"task_id": tid, "priority": priority, "action": f"do {tid}",
            "acceptance_criteria": ["done"], "dependencies": deps or [], **extra}


def plan(*decisions: dict[str, Any]) -> Plan:
    return Plan.model_validate({"decisions": list(decisions)})


def test_seed_style_plan_is_accepted_as_written() -> None:
    resources: dict[str, Any] = {"gpu_type": "A100", "gpu_hours": 1.5, "memory_gb": 32,
                                 "storage_gb": 2, "parallel_compatible": False}
    seeded: dict[str, Any] = {
        "meeting_id": "cycle2_20251015_080000",
        "generated_at": "2025-10-15T08:00:00Z",
        "context": "Week 1 Cycle 2",
        "decisions": [{
            "task_id": 1, "priority": "HIGH", "action": "Re-execute Task 1",
            "owner": "ops_commander", "deadline": "2025-10-15T18:00:00Z",
            "rationale": "Needed for the GO/NO-GO decision",
            "acceptance_criteria": ["Output artifact: baseline.json with >= 100 samples"],
            "dependencies": [],
            "estimated_resources": resources,
            "context": {"previous_attempts": 0, "known_blockers": [],
                        "dataset_path": "/data/coco_val2017"},
        }],
    }
    parsed = Plan.model_validate(seeded)
    assert parsed.decisions[0].task_id == "1"
    assert parsed.decisions[0].estimated_resources == resources


def test_order_is_kahn_with_priority_first_among_ready_tasks() -> None:
    p = plan(decision(1), decision(2, priority="HIGH"), decision(3, [1, 2], priority="HIGH"),
             decision(4, [1], priority="LOW"), decision(5, priority="LOW"))
    assert check_graph(p) == ["2", "1", "3", "4", "5"]


def test_numeric_and_string_ids_are_the_same_task() -> None:
    assert check_graph(plan(decision(1), decision("2", [1]))) == ["1", "2"]


@pytest.mark.parametrize(("decisions", "message"), [
    ([decision(1), decision(1)], "task 1: duplicate task_id"),
    ([decision(1, [7])], "task 1: unknown dependency '7'"),
    ([decision(1, [1])], "task 1: depends on itself"),
    ([decision("a", ["c"]), decision("b", ["a"]), decision("c", ["b"]), decision("d", ["c"])],
     "dependency cycle among tasks: a, c, b, a"),
])
def test_graph_errors_name_the_tasks(decisions: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(PlanError, match=message.replace("(", r"\(")):
        check_graph(plan(*decisions))


@pytest.mark.parametrize(("change", "field"), [
    ({"priority": "URGENT"}, "priority"),
    ({"acceptance_criteria": []}, "acceptance_criteria"),
    ({"task_id": "../etc"}, "task_id"),
    ({"task_id": True}, "task_id"),
    ({"job": {"entry": "a.py", "code": "print(1)"}}, "job"),
    ({"job": {}}, "job"),
    ({"job": {"code": "x", "expected_artifacts": ["../out.txt"]}}, "job"),
    ({"job": {"code": "x", "resources": {"memory_mb": 10**9}}}, "job.resources.memory_mb"),
    ({"job": {"code": "x", "args": {"bad name": 1}}}, "job"),
    ({"checks": [{"metric": "p", "op": "~", "value": 1}]}, "checks.0.op"),
    ({"surprise": 1}, "surprise"),
])
def test_schema_violations_name_the_field(change: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        plan({**decision(1), **change})
    locations = {".".join(str(p) for p in e["loc"][2:]) for e in info.value.errors()}
    assert any(loc.startswith(field) for loc in locations), locations


def test_empty_plan_is_refused() -> None:
    with pytest.raises(ValidationError):
        Plan.model_validate({"decisions": []})


def test_a_plan_may_have_ten_thousand_tasks_and_no_more() -> None:
    assert len(plan(*(decision(f"t{i}") for i in range(10_000))).decisions) == 10_000
    with pytest.raises(ValidationError, match="at most 10000 items"):
        plan(*(decision(f"t{i}") for i in range(10_001)))
