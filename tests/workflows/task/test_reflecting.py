"""The task workflow asks the reflector only for an unnamed failure, and only with a model.

Time-skipping server, real reflection (its rule table says ``unknown`` for a crash without a
traceback), the reflector role faked by name with its answer scored and guarded by the real
code: an argument patch is applied and the task completes; a request for more memory is
refused, recorded, never applied.
"""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture.reflector import run_deferred, run_reflector


async def test_an_unnamed_failure_is_patched_by_the_reflector_and_a_hostile_patch_refused(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    report, reflector = await run_reflector(time_env, tmp_path)
    tasks = {t.task_id: t for t in report.tasks}
    assert tasks["a"].status == "completed", tasks["a"].status_reason
    (patch,) = tasks["a"].provenance.patches
    assert patch.outcome == "applied" and patch.changes[0].field == "args.behave"
    assert tasks["b"].status == "failed"
    assert "raises resources.memory_mb" in tasks["b"].status_reason
    assert tasks["b"].provenance.patches == []
    assert sorted(str(r.task_id) for r in reflector.asked) == ["a", "b"]
    assert all(r.note.root_cause == "unknown" for r in reflector.asked)


async def test_without_a_model_the_reflector_is_never_asked(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    report, reflector = await run_reflector(time_env, tmp_path, model=False)
    assert [t.status for t in report.tasks] == ["failed", "failed"]
    assert reflector.asked == []


async def test_a_deferred_patch_in_a_plain_run_names_no_next_cycle(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    report = await run_deferred(time_env, tmp_path)
    (only,) = report.tasks
    assert only.status == "deferred", only.status_reason
    (patch,) = only.provenance.patches
    assert patch.outcome == "deferred"
    assert (f"patch {patch.patch_id} not applied: it needs a person's approval, and the run "
            "has no error gate (--human-gate error) to ask for it" in only.status_reason)
    assert "cycle" not in only.status_reason  # only a study has a next cycle
