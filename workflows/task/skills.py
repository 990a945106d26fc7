"""A finished task's outcome as the skill library takes it, with its deviation.

The outcome (the job that finally ran, the fixes on the way, the steps taken, time and cost)
goes to the long-lived ``SkillLibraryWorkflow`` with the task's hand-off to the learner
(``workflows.task.learning``).
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.contracts.plan import Scalar
    from workflows.contracts.results import TaskResult
    from workflows.library.contracts import TaskOutcome
    from workflows.library.formulas import deviation
    from workflows.library.patterns import SkillStep
    from workflows.task.phases import Phase
    from workflows.task.state import TaskState


def task_outcome(state: TaskState, result: TaskResult) -> TaskOutcome:
    """The outcome of a finished task, as the library takes it."""
    task, job, attempts = state.task, state.job, dict(state.attempts)
    prov = result.provenance
    steps = [SkillStep(agent=prov.job_author, phase=Phase.IMPLEMENT.value)]
    if attempts.get(Phase.REVIEW, 0):
        steps.append(SkillStep(agent="panel", phase=Phase.REVIEW.value,
                               detail=f"{attempts[Phase.REVIEW]} review(s)"))
    if result.reflections:
        steps.append(SkillStep(agent="reflection", phase="reflect",
                               detail=", ".join(sorted({n.root_cause
                                                        for n in result.reflections}))))
    if prov.job_author.startswith("debugger:"):
        steps.append(SkillStep(agent=prov.job_author, phase="debug"))
    if attempts.get(Phase.EXECUTE, 0):
        steps.append(SkillStep(agent="sandbox", phase=Phase.EXECUTE.value,
                               detail=f"{attempts[Phase.EXECUTE]} run(s)"))
    if attempts.get(Phase.VERIFY, 0):
        steps.append(SkillStep(agent="verifier", phase=Phase.VERIFY.value))
    fixes = [c for p in prov.patches if p.outcome == "applied" for c in p.changes]
    started, finished = result.started_at, result.finished_at
    duration = (finished - started).total_seconds() if started and finished else 0.0
    use = task.skill
    level, detail = ("none", "")
    if use is not None:
        level, detail = deviation(result.status, attempts.get(Phase.EXECUTE, 0), result.metrics,
                                  [a.name for a in result.artifacts], use)
    decision = task.decision
    return TaskOutcome(
        run_id=task.run_id, task_id=decision.task_id, action=decision.action,
        status=result.status, goal=task.goal, job=job, job_author=prov.job_author,
        failure=("" if result.execution is None or result.execution.outcome == "succeeded"
                 else result.execution.outcome),
        input_names=list(decision.inputs), acceptance_criteria=list(decision.acceptance_criteria),
        checks=list(decision.checks), metrics=_scalars(result.metrics),
        artifacts=[a.name for a in result.artifacts],
        attempts=attempts.get(Phase.EXECUTE, 0), fixes=fixes[:16], steps=steps,
        duration_s=round(duration, 3), cost_usd=result.model.usage.cost_usd,
        tokens=result.model.usage.total_tokens, skill=use,
        memory_tries=state.memory_tries[:16],
        guidelines=list(prov.guidelines)[:16], deviation=level,
        deviation_detail=detail,
        writer_queue=task.queues.agents if task.policy.agents.enabled else None)


def _scalars(metrics: dict[str, object]) -> dict[str, Scalar]:
    return {k: v for k, v in list(metrics.items())[:64]
            if isinstance(v, str | int | float | bool) and not (isinstance(v, str)
                                                                 and len(v) > 200)}

