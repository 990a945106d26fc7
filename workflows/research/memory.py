"""A run's use of memory: notes for its planner, advice at intake, the reflection summary.

Before a goal is planned, memory is asked for the rules and episodes that apply to it
(``recall_memory``, bounded like every advisory call): they are the planner's "what earlier
runs taught". A run whose model exchanges are recorded or replayed plans without them, so
its prompts do not depend on what memory held the day it ran.

At intake the plan's tasks are shown to memory (``consult_memory`` on the reflection pool,
bounded by the reflection timeout): semantic rules above the policy's confidence change a
task's job, a procedural template becomes the job of a task that has none, and each task's
rationale says which. If memory is slow or down, the plan runs as written and the miss is
recorded. At the end the tasks' reflections and what memory learned become the report's
reflection summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.catalogue import CONSULT_MEMORY, RECALL_MEMORY
    from workflows.common.advisory import Missed, advise
    from workflows.common.events import EventLog
    from workflows.contracts.memory import ConsultInput, ConsultTask, ReflectionSummary, TaskAdvice
    from workflows.contracts.plan import Decision, Plan
    from workflows.contracts.recall import (
        MAX_NOTES,
        MAX_TOPICS,
        NOTE_CHARS,
        TOPIC_CHARS,
        RecallInput,
    )
    from workflows.contracts.reflection import Pattern
    from workflows.contracts.results import ResearchInput, TaskResult



@dataclass
class MemoryAdvice:
    """What memory said about a run's plan."""

    advice: dict[str, TaskAdvice] = field(default_factory=dict[str, TaskAdvice])
    warnings: list[str] = field(default_factory=list[str])
    misses: int = 0


def recalls(req: ResearchInput, *, can_plan: bool) -> bool:
    """Whether a goal run asks memory for its planner's notes (see the module's docstring)."""
    return (can_plan and bool(req.goal) and req.policy.memory.enabled
            and req.policy.agents.recording is None)


async def recall_notes(req: ResearchInput, log: EventLog) -> list[str]:
    """What earlier runs taught that applies to the goal (none when memory gives no answer)."""
    assert req.goal is not None
    study = req.study
    topics = [h.statement[:TOPIC_CHARS] for h in study.tree.open()][:MAX_TOPICS] if study \
        else []
    answer = await advise(RECALL_MEMORY, RecallInput(run_id=req.run_id, goal=req.goal,
                                                     topics=topics),
                          queues=req.queues, limit_s=req.policy.reflection_timeout_s, log=log,
                          agent="memory", summary="recall memory for the planner")
    if isinstance(answer, Missed):
        return []
    log.add("agent_call", "complete", agent="memory", status="recalled",
            outputs={"notes": len(answer.notes), "rules": answer.rules,
                     "task_types": answer.task_types[:20], "warnings": answer.warnings[:20]})
    return [note[:NOTE_CHARS] for note in answer.notes[:MAX_NOTES]]


async def consult_memory(req: ResearchInput, plan: Plan, log: EventLog) -> tuple[Plan,
                                                                               MemoryAdvice]:
    """The plan with memory's advice applied, and the advice itself."""
    policy = req.policy.memory
    ask = ConsultInput(
        run_id=req.run_id, apply_rules=policy.apply_rules, use_templates=policy.use_templates,
        min_confidence=policy.min_rule_confidence, policy=req.policy.review,
        tasks=[ConsultTask(task_id=d.task_id, action=d.action, job=d.job,
                           input_names=list(d.inputs)) for d in plan.decisions])
    answer = await advise(CONSULT_MEMORY, ask, queues=req.queues,
                          limit_s=req.policy.reflection_timeout_s, log=log, agent="memory")
    if isinstance(answer, Missed):
        return plan, MemoryAdvice(misses=1, warnings=[
            f"memory was not consulted ({answer.reason}): the plan ran as written"])
    found = MemoryAdvice(advice={a.task_id: a for a in answer.advice if a.job is not None},
                         warnings=list(answer.warnings))
    found.warnings.extend(f"task {a.task_id}: {why}" for a in answer.advice
                          for why in a.skipped)
    log.add("agent_call", "complete", agent="memory", status="consulted",
            outputs={"applied": {t: a.rationale() for t, a in found.advice.items()},
                     "warnings": found.warnings[:50]})
    if not found.advice:
        return plan, found
    decisions = [_advised(d, found.advice.get(d.task_id)) for d in plan.decisions]
    return plan.model_copy(update={"decisions": decisions}), found


def _advised(decision: Decision, advice: TaskAdvice | None) -> Decision:
    if advice is None or advice.job is None:
        return decision
    why = advice.rationale()
    rationale = f"{decision.rationale} | {why}" if decision.rationale else why
    return decision.model_copy(update={"job": advice.job, "rationale": rationale})


def summarize(tasks: list[TaskResult], memory: MemoryAdvice) -> ReflectionSummary:
    """The run's reflection summary: patterns, patches and their success, what was learned."""
    summary = ReflectionSummary(misses=memory.misses, warnings=memory.warnings[:100])
    patterns: dict[tuple[str, str], Pattern] = {}
    for task in tasks:
        for note in task.reflections:
            for p in note.patterns:
                known = patterns.get((p.kind, p.key))
                if known is None or p.count > known.count:
                    patterns[(p.kind, p.key)] = p
        prov = task.provenance
        applied = [p for p in prov.patches if p.outcome == "applied"]
        summary.patches_applied += len(applied)
        if task.status == "completed":
            summary.patches_succeeded += len(applied)
        summary.misses += prov.reflection_misses
        summary.rules_applied.extend(r for r in prov.memory_rules
                                     if r not in summary.rules_applied)
        if prov.template_id and prov.template_id not in summary.templates_used:
            summary.templates_used.append(prov.template_id)
        learned = task.learned
        if learned is not None:
            summary.rules_promoted.extend(learned.rules_promoted)
            summary.rules_validated.extend(learned.rules_validated)
            summary.rules_demoted.extend(learned.rules_demoted)
            summary.templates_cached.extend(learned.templates_cached)
    summary.patterns = sorted(patterns.values(), key=lambda p: (p.kind, p.key))
    return summary
