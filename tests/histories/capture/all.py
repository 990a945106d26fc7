"""Capture every saved history for the replay tests, and the helpers that write them.

Run ``python -m tests.histories.capture`` (``make histories``) after an intentional change to
workflow code: a change to the commands a workflow emits is guarded with a patch declared in
``workflows/patches.py`` (``docs/operations/patches.md``), and its new path gets a scenario
here. The scenarios of this module reuse the fake-activity runs of ``test_research``; the
others live in the modules beside it, each of which re-captures only its own histories with
``python -m tests.histories.capture.<module>`` (``branches`` those of branches and steering:
``branched``, ``steered``, ``cancelled``, ``withdrawn``, ``tied``, ``held``,
``checkpointed``, ``periodic``). ``reset`` needs
a dev server and runs only alone.
"""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from pathlib import Path
from typing import Any

from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment

from activities.learning.handoff import Learner
from activities.learning.settle import wait_learned
from client.assay import DATA_CONVERTER
from tests.conftest import binary, register_search_attributes
from tests.histories.capture.answers import run_answered
from tests.histories.capture.batches import run_batches
from tests.histories.capture.bounds import run_bounds
from tests.histories.capture.branches import SCENARIOS as BRANCH_SCENARIOS
from tests.histories.capture.decisions import run_decisions, run_decisions_study
from tests.histories.capture.environments import run_environments
from tests.histories.capture.escalation import run_escalation, save_escalation
from tests.histories.capture.goalenv import run_goal_environment
from tests.histories.capture.guided import run_guided
from tests.histories.capture.learning import run_learning
from tests.histories.capture.own_verdicts import run_own_verdicts
from tests.histories.capture.plans import run_plans
from tests.histories.capture.reflector import run_deferred, run_reflector
from tests.histories.capture.refusals import run_library_refusals, run_refusals
from tests.histories.capture.retries import run_retries
from tests.histories.capture.study import run_cancelled_study, run_study, save_study
from tests.histories.capture.study_cycle import run_study_cycle, run_study_reuse
from tests.histories.capture.subagent import run_subagents
from tests.histories.capture.synthesis import run_synthesis, run_synthesis_cancelled
from tests.histories.capture.tiers import run_tiers
from tests.histories.capture.unhung import (
    run_cancel_running,
    run_gate_withdrawn,
    run_siblings,
    save_unhung,
)
from tests.histories.capture.upserts import run_coalesced
from tests.histories.capture.writer import Recorder, Reformulating, run_library, run_reformulated
from tests.workflows.agents_fakes import goal_agents, job, probe_environment
from tests.workflows.harness import Harness, task
from workflows.catalogue import RECORD_OUTCOMES
from workflows.constants import (
    batch_workflow_id,
    branch_task_workflow_id,
    cycle_run_id,
    task_workflow_id,
)
from workflows.contracts.kinds import task_kind
from workflows.contracts.memory import (
    ConsultAnswer,
    ConsultInput,
    RememberAnswer,
    RememberInput,
    RememberTasksAnswer,
    RememberTasksInput,
    RuleUse,
    TaskAdvice,
)
from workflows.contracts.reflection import PatchChange
from workflows.contracts.results import ResearchResult, RunReport
from workflows.contracts.roles import (
    CodeAnswer,
    CodeRequest,
)
from workflows.contracts.skills import (
    LibraryState,
    MatchAnswer,
    MatchInput,
    RecordAnswer,
    SkillApplication,
    SkillUse,
    TaskOutcome,
    library_id,
)
from workflows.library.workflow import SkillLibraryWorkflow
from workflows.research.workflow import ResearchWorkflow

HISTORIES = Path(__file__).resolve().parents[1]

UNSAFE = "import socket\nsocket.create_connection(('example.org', 80))\n"
SCENARIOS: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = {
    "diamond_completed": ([task("report", deps=["a", "b"]), task("a", priority="LOW"),
                           task("b", priority="HIGH")], {}),
    "failure_blocks": ([task("a", behave="crash"), task("b", deps=["a"]), task("d"),
                        task("e", behave="no_artifact"), task("f", job=False)], {}),
    "retries": ([task("oom", behave="oom_above:32", batch_size=64),
                 task("moved", behave="misplaced"), task("unsafe", code=UNSAFE)], {}),
    "gates": ([task("a")], {"gates": {"plan": {"human": True, "timeout_s": 3600,
                                               "on_timeout": "approve"},
                                      "result": {"human": True, "timeout_s": 3600,
                                                 "on_timeout": "approve"}}}),
    "timeline": ([task("load", priority="HIGH"), task("fit", deps=["load"])], {}),
}
"""Plan runs by name; ``timeline``'s task workflows and activities carry summaries."""


async def run_goal(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The agents scenario: plan, code, model review, a crash repaired by the debuggers."""
    agents = goal_agents()
    crashing = iter([job("crash"), job("ok")])
    coder = agents.write_job

    async def write_job(req: CodeRequest) -> CodeAnswer:  # the second task's job crashes
        answer = await coder(req)
        return answer.model_copy(update={"job": next(crashing) if req.task_id else answer.job})

    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root,
                      overrides={**agents.overrides(), "write_job": write_job},
                      extra=[probe_environment])
    req = harness.goal_request("does it fit?", agents={"enabled": True})
    async with harness.worker():
        return await env.client.execute_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                 task_queue=harness.queue)


async def consult_memory(req: ConsultInput) -> ConsultAnswer:
    """Memory with one rule for task ``a``: its batch is planned at 16 from the start."""
    advice: list[TaskAdvice] = []
    for t in req.tasks:
        if t.task_id != "a" or t.job is None:
            continue
        change = PatchChange(field="args.batch_size", old_value=t.job.args["batch_size"],
                             new_value=16)
        advice.append(TaskAdvice(
            task_id="a", task_type=task_kind(t.action, t.job, t.input_names),
            job=t.job.model_copy(update={"args": {**t.job.args, "batch_size": 16}}),
            rules=[RuleUse(rule_id="sem-0123456789", root_cause="out_of_memory",
                           confidence=0.8, changes=[change])]))
    return ConsultAnswer(advice=advice, warnings=["rule sem-x is unreadable"])


async def remember_task(req: RememberInput) -> RememberAnswer:
    """Memory that learns one episode per attempt."""
    return RememberAnswer(task_type=task_kind(req.action, req.first_job, req.input_names),
                          episodes=len(req.failures) + 1)


async def remember_tasks(req: RememberTasksInput) -> RememberTasksAnswer:
    """The same memory, handed several tasks at once (patch ``batched-memory``)."""
    return RememberTasksAnswer(answers=[await remember_task(t) for t in req.tasks])


async def run_memory(env: WorkflowEnvironment, root: Path) -> RunReport:
    """The memory scenario: a rule applied at intake, a patched retry, tasks remembered."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root,
                      overrides={"consult_memory": consult_memory,
                                 "remember_task": remember_task})
    return await harness.run([task("a", behave="oom_above:32", batch_size=64),
                              task("b", behave="oom_above:32", batch_size=64)])


async def match_skills(req: MatchInput) -> MatchAnswer:
    """A library with one skill that fits the goal: it supplies the plan."""
    use = SkillUse(skill_id="fit-model@v1", name="fit-model", version=1, confidence=0.9,
                   similarity=0.8, parameters={"batch_size": 16},
                   expected_artifacts=["out.txt"], expected_metrics=["score"],
                   rationale="skill fit-model@v1 (skill, confidence 0.90, similarity 0.80)")
    return MatchAnswer(applications=[SkillApplication(
        task_id="skill-1", use=use, job=job("ok", args={"behave": "ok", "batch_size": 16}),
        action="fit the model", acceptance_criteria=["fitted"])])


@RECORD_OUTCOMES.defn
async def record_outcomes(outcomes: list[TaskOutcome]) -> RecordAnswer:
    """Counts the uses it is given."""
    return RecordAnswer(recorded=len(outcomes), used=[o.skill.skill_id for o in outcomes
                                                      if o.skill is not None])


async def run_skills(env: WorkflowEnvironment, root: Path) -> tuple[ResearchResult, str]:
    """The skills scenario: a goal's plan from a skill, its outcome handed to the library."""
    queue = f"capture-{uuid.uuid4().hex[:8]}"
    harness = Harness(env, queue, root, overrides={
        "match_skills": match_skills,
        "hand_off_outcome": Learner(auto_approve=1.01).hand_off_outcome},
        extra=[record_outcomes], workflows=[SkillLibraryWorkflow])
    req = harness.goal_request("fit the model", skills={"enabled": True})
    library = library_id(queue)
    async with harness.worker():
        await env.client.start_workflow(SkillLibraryWorkflow.run, LibraryState(), id=library,
                                        task_queue=queue)
        result = await env.client.execute_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                   task_queue=queue)
        keys = [f"{req.run_id}/{t.task_id}" for t in result.tasks]
        assert await wait_learned(env.client, queue, keys) == []
        await env.client.get_workflow_handle(library).terminate()
    return result, library


async def capture() -> None:
    """Run every scenario and save the run's and its tasks' histories."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=binary("temporal-test-server"), data_converter=DATA_CONVERTER)
    await register_search_attributes(env.client)
    try:
        runs: list[tuple[str, ResearchResult | RunReport]] = []
        for name, (decisions, policy) in SCENARIOS.items():
            with tempfile.TemporaryDirectory() as tmp:
                harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", Path(tmp))
                runs.append((name, await harness.run(decisions, **policy)))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("agents", await run_goal(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("memory", await run_memory(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            skills, library = await run_skills(env, Path(tmp))
            runs.append(("skills", skills))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("refusals", await run_refusals(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("bounds", await run_bounds(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("batches", await run_batches(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("plans", await run_plans(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("answered", await run_answered(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("coalesced", await run_coalesced(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("flushes", await run_coalesced(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("by_category", await run_retries(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("flushes_reviewed", await run_goal(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("reflector", (await run_reflector(env, Path(tmp)))[0]))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("reflector_deferred", await run_deferred(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("tiers", await run_tiers(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("goalenv", (await run_goal_environment(env, Path(tmp))).result))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("study_cycle", await run_study_cycle(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("decisions", await run_decisions(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            decided_study = await run_decisions_study(env, Path(tmp))
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("study_reuse", await run_study_reuse(env, Path(tmp))))
        for name, scenario in BRANCH_SCENARIOS.items():
            with tempfile.TemporaryDirectory() as tmp:
                runs.append((name, await scenario(env, Path(tmp))))
        with tempfile.TemporaryDirectory() as tmp:
            study = await run_study(env, Path(tmp))
        with tempfile.TemporaryDirectory() as tmp:
            cancelled_study = await run_cancelled_study(env, Path(tmp))
        with tempfile.TemporaryDirectory() as tmp:
            escalated_study = await run_escalation(env, Path(tmp))
            synthesized = await run_synthesis(env, Path(tmp) / "ended")
            synthesized_cancel = await run_synthesis_cancelled(env, Path(tmp) / "cancelled")
            own_verdicts, _ = await run_own_verdicts(env, Path(tmp) / "own")
        refusing_library = await run_library_refusals(env)
        with tempfile.TemporaryDirectory() as tmp:
            learned, learning_library = await run_learning(env, Path(tmp))
        _, writer_library = await run_library(env, Recorder(), model=True)
        _, bounded_library = await run_library(env, Recorder(), model=False, oversize=True)
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("reformulated", await run_reformulated(env, Path(tmp),
                                                                Reformulating())))
        await save(env, "learning", learned)
        await save_one(env, "learning.library", learning_library)
        with tempfile.TemporaryDirectory() as tmp:
            await save(env, "subagent", await run_subagents(env, Path(tmp)))
        with (tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as other,
              tempfile.TemporaryDirectory() as third):
            await save_unhung(env, await run_siblings(env, Path(tmp)),
                              await run_gate_withdrawn(env, Path(other)),
                              await run_cancel_running(env, Path(third)))
        with tempfile.TemporaryDirectory() as tmp:
            guided, guided_library = await run_guided(env, Path(tmp))
        await save(env, "guided", guided)
        await save_one(env, "guided.library", guided_library)
        with tempfile.TemporaryDirectory() as tmp:
            used, used_library = await run_guided(env, Path(tmp))
        await save(env, "uses", used)
        await save_one(env, "uses.library", used_library)
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(("environments", (await run_environments(env, Path(tmp)))[0]))
        for name, result in runs:
            await save(env, name, result)
        await save_one(env, "skills.library", library)
        await save_one(env, "refusals.library", refusing_library)
        await save_one(env, "writer.library", writer_library)
        await save_one(env, "outcome_before_bounds.library", bounded_library)
        await save_study(env, *study)
        await save_one(env, "study_cancelled.study-1", cancelled_study)
        await save_escalation(env, *escalated_study)
        await save_one(env, "synthesis.study-1", synthesized)
        await save_one(env, "synthesis_cancelled.study-1", synthesized_cancel)
        await save_one(env, "own_verdicts.study-2", own_verdicts)
        await save_one(env, "decisions_study.study-1", decided_study)
        await save_one(env, "decisions_study.research-cycle-1",
                       cycle_run_id(decided_study, 1))
    finally:
        await env.shutdown()


async def save(env: WorkflowEnvironment, name: str,
               result: ResearchResult | RunReport) -> None:
    """Write the histories of a run, of each task that started, of each batch and branch.

    A batch's history is ``<name>.batch-NNNN.json``. A branch's history is
    ``<name>.branch-<branch>.json``; its tasks' are ``<name>.task-<task>.branch-<branch>.json``
    (those that started).
    """
    ids = [("research", result.run_id), *(
        (f"task-{t.task_id}", task_workflow_id(result.run_id, t.task_id))
        for t in result.tasks if t.status != "blocked")]
    for kind, wf_id in ids:
        await save_one(env, f"{name}.{kind}", wf_id)
    number = 1  # a run of many tasks runs them in batches
    while await started(env, batch_workflow_id(result.run_id, number)):
        await save_one(env, f"{name}.batch-{number:04d}",
                       batch_workflow_id(result.run_id, number))
        number += 1
    for branch in result.branches.branches if result.branches is not None else []:
        await save_one(env, f"{name}.branch-{branch.name}", branch.workflow_id)
        for tid in branch.tasks:
            wf_id = branch_task_workflow_id(result.run_id, branch.name, tid)
            if await started(env, wf_id):
                await save_one(env, f"{name}.task-{tid}.branch-{branch.name}", wf_id)


async def started(env: WorkflowEnvironment, wf_id: str) -> bool:
    """Whether workflow ``wf_id`` was started (a task cancelled unstarted never was)."""
    try:
        await env.client.get_workflow_handle(wf_id).describe()
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True


async def save_one(env: WorkflowEnvironment, stem: str, wf_id: str,
                   run_id: str | None = None) -> None:
    """Write one workflow's history (the execution ``run_id``, else its latest) as
    ``<stem>.json``."""
    history = await env.client.get_workflow_handle(wf_id, run_id=run_id).fetch_history()
    out = HISTORIES / f"{stem}.json"
    out.write_text(history.to_json())
    print(f"wrote {out}")


if __name__ == "__main__":
    asyncio.run(capture())
