"""Turning the planner's draft into a plan, through the same validation as a person's plan.

Pure and deterministic: the ResearchWorkflow calls it on every draft, and a draft that does
not validate goes back to the planner with the problems in words. In a study the draft may
propose hypotheses and link tasks to them; a task may also link a hypothesis of the study's
tree by its id alone, and the plan then carries the tree's record of it as a proposal (open,
without evidence: verdicts come from verified metrics, never from the plan). A study's
task may reuse an earlier cycle's completed task (``c1.data``) among those it is offered.
"""

from __future__ import annotations

from collections.abc import Collection

from pydantic import ValidationError

from workflows.common.validation import field_errors
from workflows.contracts.hypotheses import (
    Hypothesis,
    HypothesisTest,
    HypothesisTree,
    check_hypotheses,
)
from workflows.contracts.plan import Check, Decision, InputFile, Plan, PlanError, check_graph
from workflows.contracts.roles import DataFile, PlanDraftOutput

MAX_LISTED_PROBLEMS = 10


def plan_from_draft(draft: PlanDraftOutput, data: list[DataFile], *, name: str,
                    tree: HypothesisTree | None = None,
                    reusable: Collection[str] = ()) -> Plan:
    """The draft as a validated plan whose tasks read the goal's data by name.

    Args:
        draft: the planner's answer.
        data: the goal's data files.
        name: the plan's name.
        tree: the study's hypotheses, which the draft's tasks may link by id (none: a run
            outside a study, whose tasks may link only what the draft proposes).
        reusable: the earlier cycles' tasks (``c1.data``) a task may reuse (none outside a
            study).

    Raises:
        PlanError: every problem found (unknown data names, invalid fields, unknown or
            cyclic dependencies, invalid hypotheses or links, tasks not offered for reuse),
            one per line.
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
        unoffered = [ref for ref in task.reuse if ref not in reusable]
        if unoffered:
            offered = ", ".join(sorted(reusable)) or "none in this cycle"
            problems.append(f"task {task.task_id}: reuse {unoffered} are not completed tasks "
                            f"of an earlier cycle (those that may be reused: {offered})")
            continue
        try:
            decisions.append(Decision(
                task_id=task.task_id, priority=task.priority, action=task.action,
                acceptance_criteria=task.acceptance_criteria,
                dependencies=task.dependencies, rationale=task.rationale or None,
                checks=[Check(metric=c.metric, op=c.op, value=c.value) for c in task.checks],
                inputs=list(task.inputs), hypothesis=task.hypothesis,
                reuse=list(task.reuse), complexity=task.complexity,
                resolved_inputs=[InputFile(name=f.name, path=f.path, sha256=f.sha256,
                                           size=f.size)
                                 for f in (files[n] for n in task.inputs)]))
        except ValidationError as err:
            problems.extend(f"task {task.task_id} (tasks[{index}]), field {e}"
                            for e in field_errors(err, whole="(task)", most=3))
    hypotheses, wrong = hypotheses_of(draft, tree)
    problems.extend(wrong)
    if problems:
        raise PlanError(_listed(problems))
    plan = Plan(meeting_id=name, context=draft.context or None, decisions=decisions,
                hypotheses=hypotheses)
    check_graph(plan)
    return plan


def hypotheses_of(draft: PlanDraftOutput, tree: HypothesisTree | None,
                  ) -> tuple[list[Hypothesis], list[str]]:
    """The hypotheses a draft's plan carries, and every problem with them or their links.

    The draft's proposals come first, then the tree's records its tasks link by id alone
    (each once, in task order). A proposal may repeat a record of the tree only word for
    word: a changed hypothesis needs a new id.
    """
    known = {h.id: h for h in tree.hypotheses} if tree is not None else {}
    task_ids = {t.task_id for t in draft.tasks}
    carried: dict[str, Hypothesis] = {}
    problems: list[str] = []
    for index, item in enumerate(draft.hypotheses):
        where = f"hypothesis {item.id} (hypotheses[{index}])"
        try:
            proposal = Hypothesis(id=item.id, parent=item.parent, statement=item.statement,
                                  test=HypothesisTest(metric=item.test.metric, op=item.test.op,
                                                      threshold=item.test.threshold,
                                                      task_id=item.test.task_id))
        except ValidationError as err:
            problems.extend(f"{where}, field {e}"
                            for e in field_errors(err, whole="(hypothesis)", most=3))
            continue
        problems.extend(_proposal_problems(proposal, where, known.get(proposal.id),
                                           task_ids, seen=proposal.id in carried))
        carried.setdefault(proposal.id, proposal)
    for task in draft.tasks:
        link = task.hypothesis
        if link is None or link in carried:
            continue
        if link in known:
            carried[link] = _as_proposal(known[link])
        else:
            offered = ", ".join(sorted({*carried, *known})) or "none"
            problems.append(f"task {task.task_id}: unknown hypothesis {link!r} (propose it "
                            f"in `hypotheses`, or link one of: {offered})")
    rest = [h for h in known.values() if h.id not in carried]
    try:
        check_hypotheses([*carried.values(), *rest])
    except ValueError as err:
        problems.append(str(err))
    return list(carried.values()), problems


def _proposal_problems(proposal: Hypothesis, where: str, record: Hypothesis | None,
                       task_ids: set[str], *, seen: bool) -> list[str]:
    problems: list[str] = []
    if seen:
        problems.append(f"{where}: proposed twice")
    test = proposal.test
    if test.task_id is not None and test.task_id not in task_ids:
        problems.append(f"{where}: its test names task {test.task_id!r}, which is not in "
                        "the plan")
    if record is not None and (record.statement, record.parent, record.test) != (
            proposal.statement, proposal.parent, proposal.test):
        problems.append(f"{where}: the study already has {record.id} as "
                        f"{record.statement!r} ({record.test.describe()}); link tasks to it "
                        "by its id without proposing it again, or give a changed hypothesis "
                        "a new id")
    return problems


def _as_proposal(record: Hypothesis) -> Hypothesis:
    """A tree's record as a plan carries it: open, without evidence (the tree keeps both)."""
    return record.model_copy(update={"status": "open", "evidence": [], "decided_in": None})


def _listed(problems: list[str]) -> str:
    more = len(problems) - MAX_LISTED_PROBLEMS
    shown = problems[:MAX_LISTED_PROBLEMS] + ([f"... and {more} more"] if more > 0 else [])
    return "\n".join(shown)
