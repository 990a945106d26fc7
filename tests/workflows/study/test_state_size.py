"""A study's state is its continue-as-new payload: it must stay small however long it runs."""

from __future__ import annotations

import itertools
from typing import Any

from tests.workflows.study.factories import decision, hypothesis, plan, report, result
from workflows.contracts.hypotheses import MAX_EVIDENCE, MAX_HYPOTHESES, STATEMENT_CHARS
from workflows.contracts.study import (
    MAX_BLOCKERS,
    MAX_CARRIED,
    MAX_CYCLES,
    MAX_DEFERRED,
    MAX_METRICS,
    MAX_OUTCOMES,
    STATE_BYTES,
    TEXT_CHARS,
    CarriedTask,
    CycleSummary,
    StudyPolicy,
    StudyState,
)
from workflows.study.carry import close_cycle, record

CYCLES, TASKS = 50, 20
REALISTIC_BYTES = 256 * 1024
"""The bound a 50-cycle, 20-task study's state is held to: an eighth of the server's 2 MB."""


def cycle_report(cycle: int) -> Any:
    ids = [f"H{cycle}a", f"H{cycle}b"]
    parent = f"H{cycle - 1}a" if cycle > 1 else None
    proposals = [hypothesis(h, parent=parent, statement="the effect holds " * 12).model_dump()
                 for h in ids]
    decisions = [decision(str(i), hypothesis=ids[i % 2], action="fit a model " * 15,
                          estimated_resources={"minutes": 3, "cost_usd": 0.02})
                 for i in range(TASKS)]
    results = [result(str(i), metrics={"auc": 0.5 + cycle / 200, "rows": 1000, "f1": 0.6,
                                        "loss": 0.3, "p_value": 0.01, "seed": i},
                       model={"usage": {"cost_usd": 0.01}})
               if i % 7 else
               result(str(i), status="failed_final", reason="job exited 1: " + "x" * 150,
                      reflections=[{"note_id": f"n{i}", "task_id": str(i), "kind": "execution",
                                    "root_cause": "KeyError 'age' " * 10,
                                    "likely_fix": "use 'Age' " * 10, "confidence": 0.6}])
               for i in range(TASKS)]
    return report(results, plan(decisions, hypotheses=proposals), cost=0.3,
                  run_id=f"study-s-cycle-{cycle}")


def test_fifty_cycles_of_twenty_tasks_keep_the_state_small() -> None:
    state = StudyState(study_id="s", goal="does age predict survival? " * 10,
                       policy=StudyPolicy(max_cycles=MAX_CYCLES))
    sizes: list[int] = []
    for cycle in range(1, CYCLES + 1):
        state = close_cycle(state, cycle_report(cycle))
        sizes.append(len(state.model_dump_json().encode()))
    assert state.cycles == CYCLES
    assert len(state.tree.hypotheses) == 2 * CYCLES
    print(f"study state after {CYCLES} cycles of {TASKS} tasks: {sizes[-1]:,} bytes "
          f"(cycle 10: {sizes[9]:,}, cycle 25: {sizes[24]:,})")
    assert sizes[-1] < REALISTIC_BYTES
    per_cycle = [b - a for a, b in itertools.pairwise(sizes[10:])]
    assert max(per_cycle) < 8 * 1024, "an older cycle keeps only its headline"


LARGEST = -1.2345678901234567e-300
LARGEST_ESTIMATE = {"value": LARGEST, "ci": [LARGEST, LARGEST], "level": 0.123456789,
                    "se": LARGEST, "n": 2**63, "method": "b" * 64}
"""A metric with uncertainty at its longest: the largest a task outcome keeps."""


def full_summary(cycle: int) -> CycleSummary:
    """A cycle summary with every list full and every text at its longest."""
    text, name = "x" * TEXT_CHARS, "m" * 64
    task = {"task_id": "t" * 64, "status": "failed_final", "reason": text, "diagnosis": text,
            "action": text, "hypothesis": "h" * 64,
            "metrics": {f"{name[:-3]}{i:03d}": LARGEST_ESTIMATE for i in range(MAX_METRICS)},
            "metrics_omitted": text, "checks_passed": 1, "checks_declared": 2, "wall_s": 1.5,
            "estimated_s": 2.5,
            "cost_usd": 0.1, "estimated_cost_usd": 0.2}
    evidence = [{"task_id": "t" * 64, "metric": name, "value": -1.2345678901234567e-300,
                 "cycle": cycle, "ci": [-1.2345678901234567e-300] * 2, "level": 0.123456789}
                ] * MAX_EVIDENCE
    return CycleSummary.model_validate({
        "cycle": cycle, "run_id": "r" * 200, "plan_sha256": "a" * 64, "status": "partial",
        "tasks": [task] * MAX_OUTCOMES, "tasks_total": 10_000, "unfinished": 10_000,
        "blockers": [text] * MAX_BLOCKERS,
        "deferred": [{"task_id": "t" * 64, "root_cause": text, "likely_fix": text,
                      "confidence": 0.4}] * MAX_DEFERRED,
        "verdicts": [{"hypothesis": "h" * 64, "status": "refuted", "reason": text,
                      "evidence": evidence, "settled": True}] * MAX_HYPOTHESES,
        "decision": {"action": "fix", "reason": "y" * 4000, "hypotheses": ["h" * 64] * 20},
        "omitted": ["z" * 100] * 3})


def test_the_state_at_its_largest_stays_under_its_stated_bound() -> None:
    tree = {"hypotheses": [
        {"id": f"{i:03d}" + "h" * 61, "statement": "s" * STATEMENT_CHARS,
         "test": {"metric": "m" * 128, "op": ">=", "threshold": "v" * 64, "task_id": "t" * 64},
         "status": "refuted", "decided_in": 1,
         "evidence": [{"task_id": "t" * 64, "metric": "m" * 128,
                       "value": -1.2345678901234567e-300, "cycle": 1,
                       "ci": [-1.2345678901234567e-300] * 2, "level": 0.123456789}
                      ] * MAX_EVIDENCE}
        for i in range(MAX_HYPOTHESES)]}
    carried = [CarriedTask(task_id="t" * 64, cycle=1, status="failed", reason="x" * TEXT_CHARS,
                           diagnosis="x" * TEXT_CHARS, action="x" * TEXT_CHARS)] * MAX_CARRIED
    state = StudyState.model_validate({"study_id": "s" * 200, "goal": "g" * 4000,
                                       "first_plan": "p" * 300, "tree": tree,
                                       "carried": carried})
    full = full_summary(1)
    for _ in range(MAX_CYCLES):
        state = record(state, full, state.tree)
    size = len(state.model_dump_json().encode())
    print(f"study state at its largest ({MAX_CYCLES} cycles, every list full): {size:,} bytes")
    assert size < STATE_BYTES
