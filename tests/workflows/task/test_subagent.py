"""A task run as a subagent: its remembered fixes are tried before the rule table.

Real workflows on the time-skipping server, real reviewers, reflection and evidence, a real
skill library (PostgreSQL and a Qdrant Edge index) that matches the subagent to the task
and learns from its outcome through the real hand-off; only the sandbox is the harness's
fake, whose job runs out of memory while its batch is too large.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.agents.render import code_message
from activities.learning.handoff import Learner
from activities.learning.settle import wait_learned
from skills.library import SkillLibrary
from skills.store import SkillStore
from tests.workflows.agents_fakes import FakeAgents, job
from tests.workflows.harness import Harness, task
from workflows.constants import task_workflow_id
from workflows.contracts.patterns import (
    Preconditions,
    Skill,
    SkillMetrics,
    SkillPattern,
    SkillSignature,
)
from workflows.contracts.plan import JobSpec, Resources
from workflows.contracts.reflection import PatchChange
from workflows.contracts.results import RunReport, TaskInput, TaskResult
from workflows.contracts.skills import SkillUse, library_id
from workflows.library.subagents import fix_key
from workflows.library.workflow import SkillLibraryWorkflow
from workflows.research.workflow import ResearchWorkflow
from workflows.task.workflow import TaskWorkflow

pytestmark = pytest.mark.integration

ACTION = "Fit the model to the training table in batches"
INSTRUCTIONS = ("You are the specialist for fitting the model in batches. When the run "
                "runs out of memory, make the batch smaller.")
SOURCE = "print('fit')\n"
EPOCHS = PatchChange(field="args.epochs", old_value=10, new_value=5, reason="fewer epochs")
SMALL_BATCH = PatchChange(field="args.batch_size", old_value=64, new_value=8,
                          reason="out of memory at 512 MiB")
MORE_MEMORY = PatchChange(field="resources.memory_mb", old_value=512, new_value=4096,
                          reason="more memory")


def subagent(recovery: list[PatchChange], *, behave: str) -> Skill:
    """An active subagent whose job runs out of memory above the batch ``behave`` names."""
    template = JobSpec(
        code=SOURCE, source=SOURCE, filename="fit.py", args={"behave": behave, "batch_size": 64},
        expected_artifacts=["out.txt"], expected_metrics=["score"],
        resources=Resources(memory_mb=512, timeout_s=60))
    pattern = SkillPattern(
        name="fit-model-batches", kind="subagent", description=ACTION, context=ACTION,
        guideline=INSTRUCTIONS, action=ACTION, job=template, recovery=recovery,
        signature=SkillSignature(keywords=["fit", "model", "batches"]),
        preconditions=Preconditions(keywords=["fit", "batches"]))
    return Skill(pattern=pattern, status="active", confidence=0.9, origin="extracted",
                 metrics=SkillMetrics(evidence_successes=5))


async def run_as_subagent(env: WorkflowEnvironment, queue: str, root: Path,
                          library: SkillLibrary) -> tuple[Harness, TaskResult, list[str]]:
    """Run one jobless task the library matches to its subagent; wait for the library to learn.

    Returns the harness, the task's result and the activities its workflow scheduled.
    """
    harness = Harness(env, queue, root, overrides={
        "hand_off_outcome": Learner(auto_approve=1.01).hand_off_outcome},
        extra=[library.record_outcomes], workflows=[SkillLibraryWorkflow])
    harness.skills = library
    decision = {**task("fit", job=False), "action": ACTION}
    req = harness.request([decision], skills={"enabled": True})
    async with harness.worker():
        result = await env.client.execute_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                   task_queue=queue)
        assert await wait_learned(env.client, queue, [f"{req.run_id}/fit"]) == []
        await env.client.get_workflow_handle(library_id(queue)).terminate()
    report: RunReport = harness.report_of(result)
    history = await env.client.get_workflow_handle(
        task_workflow_id(req.run_id, "fit")).fetch_history()
    scheduled = [e.activity_task_scheduled_event_attributes.activity_type.name
                 for e in history.events if e.HasField("activity_task_scheduled_event_attributes")]
    return harness, report.tasks[0], scheduled


async def test_a_remembered_fix_cures_the_run_without_reflection_and_is_learned_first(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, skill_store: SkillStore,
        skill_library: SkillLibrary) -> None:
    skill = await skill_store.add(subagent([EPOCHS, MORE_MEMORY, SMALL_BATCH],
                                     behave="oom_above:16"), by="test")
    harness, only, scheduled = await run_as_subagent(time_env, task_queue, tmp_path, skill_library)

    assert only.status == "completed", only.status_reason
    assert only.provenance.skill is not None
    assert only.provenance.skill.skill_id == skill.skill_id
    assert only.provenance.skill.instructions == INSTRUCTIONS
    assert [a["batch_size"] for a in harness.sandbox.args_seen] == [64, 8]
    assert "diagnose_failure" not in scheduled  # the rule table was never asked
    refused, applied = only.provenance.patches  # `epochs` is not an argument of this job
    assert refused.outcome.startswith("refused: ") and "more memory" in refused.outcome
    assert applied.outcome == "applied" and applied.patch_id.startswith("memory-")
    assert [(c.field, c.old_value, c.new_value) for c in applied.changes] == [
        ("args.batch_size", 64, 8)]

    learned = (await skill_store.get(skill.skill_id)).pattern
    assert learned.recovery[0] == SMALL_BATCH
    assert learned.recovery_misses == {fix_key(MORE_MEMORY): 1}
    assert learned.recovery == [SMALL_BATCH, EPOCHS, MORE_MEMORY]
    assert "memory" in [e.action for e in await skill_store.events(skill.skill_id)]


async def test_a_refused_fix_is_recorded_and_the_rule_table_runs_and_its_cure_is_learned(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, skill_store: SkillStore,
        skill_library: SkillLibrary) -> None:
    skill = await skill_store.add(subagent([MORE_MEMORY], behave="oom_above:32"), by="test")
    harness, only, scheduled = await run_as_subagent(time_env, task_queue, tmp_path, skill_library)

    assert only.status == "completed", only.status_reason
    assert scheduled.count("diagnose_failure") == 1
    assert [a["batch_size"] for a in harness.sandbox.args_seen] == [64, 32]
    refused, halved = only.provenance.patches
    assert refused.patch_id.startswith("memory-")
    assert "rules never ask for more memory" in refused.outcome
    assert halved.outcome == "applied" and halved.root_cause == "out_of_memory"

    learned = (await skill_store.get(skill.skill_id)).pattern
    assert [(f.field, f.new_value) for f in learned.recovery] == [
        ("args.batch_size", 32), ("resources.memory_mb", 4096)]
    assert learned.recovery_misses == {fix_key(MORE_MEMORY): 1}


async def test_the_coder_of_a_task_run_as_a_subagent_is_given_its_instructions(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    agents = FakeAgents(jobs={"fast": job("ok")})
    harness = Harness(time_env, task_queue, tmp_path, overrides=agents.overrides())
    req = harness.request([{**task("fit", job=False), "action": ACTION}],
                          agents={"enabled": True})
    use = SkillUse(skill_id="fit-model-batches@v1", name="fit-model-batches", version=1,
                   kind="subagent", instructions=INSTRUCTIONS, recovery=[SMALL_BATCH])
    assert req.plan is not None
    given = TaskInput(run_id=req.run_id, decision=req.plan.decisions[0], queues=req.queues,
                      policy=req.policy, skill=use)
    async with harness.worker():
        result = await time_env.client.execute_workflow(
            TaskWorkflow.run, given, id=task_workflow_id(req.run_id, "fit"),
            task_queue=task_queue)
    assert result.status == "completed", result.status_reason
    (asked,) = agents.requests["write_job"]
    assert asked.instructions == INSTRUCTIONS
    assert "Instructions of the specialist" in code_message(asked)
    assert INSTRUCTIONS in code_message(asked)
    plain = asked.model_copy(update={"instructions": ""})
    assert "Instructions of the specialist" not in code_message(plain)
