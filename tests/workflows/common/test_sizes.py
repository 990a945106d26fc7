"""Results that always fit: capped task results, a run's result cut to its limit."""

from __future__ import annotations

import gc
from datetime import UTC, datetime
from typing import Any

from workflows.common.sizes import (
    LISTED_ARTIFACTS,
    RUN_RESULT_LIMIT,
    TASK_RESULT_LIMIT,
    bound_task,
    fit_run,
    json_size,
    lean_result,
    task_summary,
)
from workflows.contracts.execution import Artifact, ExecutionOutcome
from workflows.contracts.plan import Plan
from workflows.contracts.results import Provenance, ReportPaths, ResearchResult, TaskResult
from workflows.contracts.skills import SkillSummary
from workflows.research.context import task_digest
from workflows.research.memory import MemoryAdvice, summarize
from workflows.research.skills import note_results

NOW = datetime(2026, 1, 1, tzinfo=UTC)
REPORT = ReportPaths(results_json="/data/runs/r/execution_results_x.json",
                     summary_md="/data/runs/r/execution_summary_x.md")


def many_artifacts(n: int) -> TaskResult:
    """A completed task whose job left ``n`` small files, every one verified."""
    names = [f"results/table-part-{i:04d}.csv" for i in range(n)]
    artifacts = [Artifact(name=name, size=12, sha256=f"{i:064x}",
                          path=f"/data/work/run/t/attempt-1/{name}")
                 for i, name in enumerate(names)]
    outcome = ExecutionOutcome(outcome="succeeded", artifacts=artifacts,
                               stdout_tail="x" * 50_000, metrics={"rows": 3})
    provenance = Provenance(artifacts=names, checksums={a.name: a.sha256 for a in artifacts})
    return TaskResult(task_id="t", status="completed", status_reason="approved + evidence verified",
                      artifacts=artifacts, execution=outcome, provenance=provenance,
                      metrics={"rows": 3}, detail="/data/runs/r/tasks/t.json")


def run_result(tasks: int, **extra: object) -> ResearchResult:
    summaries = [task_summary(TaskResult(task_id=f"t{i}", status="completed",
                                         status_reason="approved + evidence verified"))
                 for i in range(tasks)]
    return ResearchResult.model_validate({
        "run_id": "r", "plan_name": "p", "plan_sha256": "0" * 64, "status": "completed",
        "timestamp": "20260101_000000", "started_at": NOW, "finished_at": NOW,
        "tasks": summaries, "task_counts": {"completed": tasks},
        "status_reason": f"completed: {tasks} completed", "report": REPORT, **extra})


def test_a_task_with_999_artifacts_lists_a_hundred_and_counts_them_all() -> None:
    whole = many_artifacts(999)
    assert json_size(whole) > 500_000
    capped = bound_task(whole)
    assert json_size(capped) < 60_000 < TASK_RESULT_LIMIT
    assert capped.status == "completed"
    assert len(capped.artifacts) == LISTED_ARTIFACTS and capped.artifact_count() == 999
    assert len(capped.provenance.artifacts) == len(capped.provenance.checksums) == 100
    assert capped.execution is not None and capped.execution.artifacts == []
    assert len(capped.execution.stdout_tail) == 2000
    assert "artifacts: 100 of 999 listed" in capped.omitted
    assert "provenance files: 100 of 999 listed" in capped.omitted
    assert capped.detail == whole.detail
    assert task_summary(capped).artifact_count == 999


def test_a_small_task_loses_nothing_but_duplicate_lists() -> None:
    whole = many_artifacts(3)
    capped = bound_task(whole)
    assert capped.artifacts == whole.artifacts and capped.provenance == whole.provenance
    assert capped.metrics == {"rows": 3} and capped.omitted == []


def test_a_task_over_its_limit_ends_failed_with_the_reason_and_where_the_rest_is() -> None:
    capped = bound_task(many_artifacts(10), limit=500)
    assert capped.status == "failed"
    assert "over the 500-byte limit of a task's result" in capped.status_reason
    assert "it ended completed: approved + evidence verified" in capped.status_reason
    assert "/data/runs/r/tasks/t.json" in capped.status_reason
    assert capped.artifacts == [] and capped.artifact_count() == 10
    size = json_size(bound_task(many_artifacts(10)))
    assert capped.omitted == [f"everything but the status ({size:,} bytes > 500)"]


def test_metrics_are_kept_whole_while_they_fit() -> None:
    whole = many_artifacts(1).model_copy(update={"metrics": {
        "score": 0.9, "curve": list(range(20_000)), "rows": 3}})
    capped = bound_task(whole)
    assert capped.metrics == {"score": 0.9, "rows": 3}
    assert "metrics: 2 of 3 kept (16,384 bytes)" in capped.omitted


def test_a_run_within_its_limit_keeps_every_task() -> None:
    result = run_result(1000)
    assert json_size(result) < RUN_RESULT_LIMIT
    assert fit_run(result) == result


def test_a_run_over_its_limit_sheds_the_plan_then_the_task_list_and_says_so() -> None:
    plan = Plan.model_validate({"decisions": [
        {"task_id": f"t{i}", "priority": "LOW", "action": "a" * 1000,
         "acceptance_criteria": ["done"]} for i in range(20)]})
    result = run_result(50, plan=plan)
    size = json_size(result)
    fitted = fit_run(result, limit=size - 1000)  # the plan alone is ~21 kB
    assert fitted.plan is None and len(fitted.tasks) == 50
    assert fitted.omitted == ["the plan"]
    tiny = fit_run(result, limit=2000)
    assert tiny.status == "completed" and tiny.tasks == [] and tiny.plan is None
    assert tiny.task_counts == {"completed": 50}
    assert tiny.omitted == ["the plan", "the per-task list (50 tasks; counts kept)"]
    assert tiny.status_reason.startswith("completed: 50 completed [this result had ")
    assert "over its 2,000-byte limit" in tiny.status_reason
    assert REPORT.results_json in tiny.status_reason
    assert json_size(tiny) <= 2000


def test_a_run_that_cannot_fit_at_all_still_ends_with_its_status_and_reason() -> None:
    fitted = fit_run(run_result(3), limit=10)
    assert fitted.status == "completed" and fitted.tasks == []
    assert "over its 10-byte limit: the per-task list (3 tasks; counts kept) left out" in \
        fitted.status_reason


def test_an_old_run_result_with_whole_tasks_still_reads() -> None:
    old = run_result(0).model_dump(mode="json")
    old["tasks"] = [many_artifacts(2).model_dump(mode="json")]
    result = ResearchResult.model_validate(old)
    assert result.tasks[0].task_id == "t" and result.tasks[0].status == "completed"


def a_whole_result(tid: str) -> TaskResult:
    """A task's result as a batch hands it back: reviews, phases, provenance, what was learned."""
    at = "2026-11-28T12:07:10Z"
    verdicts: list[dict[str, Any]] = [
        {"reviewer": reviewer, "verdict": "APPROVE", "confidence": 0.9,
         "checks": {f"check_{i}": True for i in range(8)},
         "warnings": [{"code": "metrics_not_written", "message": "no metrics.json"}],
         "reasoning": "Approved.", "details": {"lines": 2, "packages": {}}}
        for reviewer in ("ops", "quality_safety", "infrastructure")]
    return TaskResult.model_validate({
        "task_id": tid, "action": f"task {tid}", "status": "completed",
        "status_reason": "approved + evidence verified", "attempts_total": 3,
        "artifacts": [{"name": "out.txt", "size": 11, "sha256": "0" * 64,
                       "path": f"/w/{tid}/out.txt"}],
        "metrics": {"score": 0.9}, "execution": {"outcome": "succeeded", "exit_code": 0,
                                                 "stdout_tail": "done", "cpu_s": 0.5},
        "verdicts": verdicts,
        "provenance": {"approval": {"attempts": 1, "decided_by": ["panel"]},
                       "execution": {"attempts": 1}, "artifacts": ["out.txt"],
                       "checksums": {"out.txt": "0" * 64}, "job_sha256": "1" * 64,
                       "workflow_id": f"run.task-{tid}", "memory_rules": ["r-1"],
                       "template_id": "tpl-1", "guidelines": ["g-1"],
                       "patches": [{"patch_id": "p", "phase": "execute", "root_cause": "x",
                                    "outcome": "applied"}]},
        "learned": {"task_type": "fit", "rules_promoted": ["r-2"]},
        "skill_report": {"reported": True, "miss": "no skill"},
        "started_at": at, "finished_at": at, "artifacts_total": 1,
        "detail": f"tasks/{tid}.json", "omitted": ["a long stdout"],
        "phases": [{"phase": p, "at": at} for p in ("implement", "review", "execute",
                                                     "verify", "finalize")],
        "job": {"code": "print('hi')\n", "args": {"behave": "ok"},
                "expected_artifacts": ["out.txt"], "expected_metrics": ["score"]}})


def tracked(root: Any) -> int:
    """How many objects the garbage collector walks to reach everything ``root`` holds."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or not gc.is_tracked(obj) or isinstance(obj, type):
            continue
        seen.add(id(obj))
        stack.extend(gc.get_referents(obj))
    return len(seen)


def test_a_lean_result_keeps_what_a_run_reads_in_a_fraction_of_the_objects() -> None:
    """A large run keeps its batches' tasks lean: its summaries, the digests its branches'
    tasks get and the report's part read the same, and the collector walks under half as much."""
    whole = [a_whole_result(f"t{i}") for i in range(20)]
    lean = [lean_result(t) for t in whole]
    memory = MemoryAdvice()
    assert summarize(lean, memory) == summarize(whole, memory)
    skills = [SkillSummary(), SkillSummary()]
    note_results(skills[0], {}, whole)
    note_results(skills[1], {}, lean)
    assert skills[0] == skills[1]
    for full, kept in zip(whole, lean, strict=True):
        assert task_digest(kept, tail=100) == task_digest(full, tail=100)
        assert task_summary(kept) == task_summary(full)
        assert kept.model_dump(exclude={"verdicts", "phases", "omitted", "provenance"}) == (
            full.model_dump(exclude={"verdicts", "phases", "omitted", "provenance"}))
        assert kept.provenance.approvals == full.provenance.approvals
    assert not lean[0].verdicts and not lean[0].phases  # the detail file has them
    assert tracked(lean) * 2 < tracked(whole)
