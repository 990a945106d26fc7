"""Turning the planner's draft into a plan, through the same validation as a person's plan.

Pure and deterministic: the ResearchWorkflow calls it on every draft, and a draft that does
not validate goes back to the planner with the problems in words.
"""

from __future__ import annotations

from pydantic import ValidationError

from workflows.agents.roles import DataFile, PlanDraftOutput
from workflows.common.validation import field_errors
from workflows.contracts.plan import Check, Decision, InputFile, Plan, PlanError, check_graph

MAX_LISTED_PROBLEMS = 10


def plan_from_draft(draft: PlanDraftOutput, data: list[DataFile], *, name: str) -> Plan:
    """The draft as a validated plan whose tasks read the goal's data by name.

    Raises:
        PlanError: every problem found (unknown data names, invalid fields, unknown or
            cyclic dependencies), one per line.
    """
    files = {d.name: d for d in data}
    problems: list[str] = []
    decisions: list[Decision] = []
    for index, task in enumerate(draft.tasks):
        unknown = [n for n in task.inputs if n not in files]
        if unknown:
            known = ", ".join(sorted(files)) or "none were given"
            problems.append(f"task {task.task_id}: inputs {unknown} are not data files of "
                            f"this goal (the data files are: {known})")
            continue
        try:
            decisions.append(Decision(
                task_id=task.task_id, priority=task.priority, action=task.action,
                acceptance_criteria=task.acceptance_criteria,
                dependencies=task.dependencies, rationale=task.rationale or None,
                checks=[Check(metric=c.metric, op=c.op, value=c.value) for c in task.checks],
                inputs=list(task.inputs),
                resolved_inputs=[InputFile(name=f.name, path=f.path, sha256=f.sha256,
                                           size=f.size)
                                 for f in (files[n] for n in task.inputs)]))
        except ValidationError as err:
            problems.extend(f"task {task.task_id} (tasks[{index}]), field {e}"
                            for e in field_errors(err, whole="(task)", most=3))
    if problems:
        raise PlanError(_listed(problems))
    plan = Plan(meeting_id=name, context=draft.context or None, decisions=decisions)
    check_graph(plan)
    return plan


def _listed(problems: list[str]) -> str:
    more = len(problems) - MAX_LISTED_PROBLEMS
    shown = problems[:MAX_LISTED_PROBLEMS] + ([f"... and {more} more"] if more > 0 else [])
    return "\n".join(shown)
