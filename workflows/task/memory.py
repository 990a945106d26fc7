"""A finished task as memory takes it: its failures, the patches tried and what became of them.

Memory (R5-R6) learns rules and templates from these episodes on the reflection pool; the
task hands them over with its outcome (``workflows.task.learning``), and the skill library
passes them on.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.contracts.memory import AttemptRecord, RememberInput
    from workflows.contracts.results import TaskResult
    from workflows.task.phases import Phase
    from workflows.task.state import TaskState


def remember_input(state: TaskState, result: TaskResult) -> RememberInput:
    """What memory takes from the finished task: its jobs, failures, patches and metrics."""
    task, prov = state.task, state.provenance
    finished = result.finished_at or workflow.now()
    started = result.started_at or finished
    return RememberInput(
        run_id=task.run_id, task_id=result.task_id, action=task.decision.action,
        status=result.status, finished_at=finished, first_job=task.decision.job,
        final_job=state.job, failures=attempt_records(state),
        attempts=state.attempts.get(Phase.EXECUTE, 0) + state.attempts.get(
            Phase.APPROVAL_RETRY, 0),
        metrics=result.metrics, duration_s=(finished - started).total_seconds(),
        environment=state.outcome.environment if state.outcome else "",
        input_names=list(task.decision.inputs), rules_applied=list(prov.memory_rules),
        template_id=prov.template_id, promotion=task.policy.memory.promotion)


def attempt_records(state: TaskState) -> list[AttemptRecord]:
    """Every reflected failure with its patch and what became of the patch."""
    outcomes = {p.patch_id: p.outcome for p in state.provenance.patches}
    records: list[AttemptRecord] = []
    for n, note in enumerate(state.notes, start=1):
        patch = note.patch
        records.append(AttemptRecord(
            phase=note.kind, attempt=n, root_cause=note.root_cause, note_id=note.note_id,
            patch_id=patch.patch_id if patch else "",
            patch_source=note.source if patch else "none",
            changes=list(patch.changes) if patch else [],
            patch_outcome=outcomes.get(patch.patch_id, "offered") if patch else "",
            rule_id=note.memory_ref if note.source == "semantic_rule" else ""))
    return records
