"""Hypothesis verdicts from verified metrics, never from a model's words.

A hypothesis is *tested* in a cycle when a task of that cycle's plan links to it
(``Decision.hypothesis``). Its deciding tasks are then its test's ``task_id`` if it names one,
else every linked task. Each deciding task must have completed (its evidence verified): a
task that did not → ``inconclusive``; a completed task that reported no verified value of the
test's metric, or a value that cannot be compared → ``inconclusive``. Otherwise the test is
the plan check's own comparison (:meth:`Check.holds`, the same exact semantics as a task's
``checks``): holding for every deciding task → ``supported``, for none → ``refuted``, for
some → ``inconclusive`` (the evidence disagrees).

An ``inconclusive`` verdict never undoes a hypothesis already supported or refuted; a
supported or refuted one replaces whatever was there.
"""

from __future__ import annotations

import math

from workflows.common.bounds import clip
from workflows.contracts.hypotheses import (
    DECIDED,
    MAX_EVIDENCE,
    Evidence,
    Hypothesis,
    HypothesisStatus,
    HypothesisTest,
    HypothesisTree,
    Verdict,
)
from workflows.contracts.plan import Check, Plan
from workflows.contracts.study import TEXT_CHARS, CycleSummary, TaskOutcome


def shown(value: object) -> str:
    """A value as a reason says it: floats to four significant digits, the rest as written."""
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:.4g}"
    return str(value)


def adopt(tree: HypothesisTree, plan: Plan) -> HypothesisTree:
    """``tree`` with the plan's proposals joined, check references resolved against the plan.

    A proposal whose id is in the tree already keeps the tree's record (its status and
    evidence); it must then say the same (statement, parent, test).

    Raises:
        ValueError: a check reference names no check of its task, a proposal contradicts the
            tree's record of its id, or the joined tree is invalid (unknown parent, cycle...).
    """
    known = {h.id: h for h in tree.hypotheses}
    added: list[Hypothesis] = []
    for proposal in plan.hypotheses:
        proposal = resolved(proposal, plan)
        record = known.get(proposal.id)
        if record is None:
            added.append(proposal)
        elif (record.statement, record.parent, record.test) != (
                proposal.statement, proposal.parent, proposal.test):
            raise ValueError(f"hypothesis {proposal.id}: the plan says it differently from "
                             "the study's record (a changed hypothesis needs a new id)")
    return HypothesisTree(hypotheses=[*tree.hypotheses, *added])


def resolved(hypothesis: Hypothesis, plan: Plan) -> Hypothesis:
    """``hypothesis`` with a check reference turned into that plan check's metric test.

    Raises:
        ValueError: the referenced task is not in the plan or has no check on that metric.
    """
    test = hypothesis.test
    if test.check is None:
        return hypothesis
    decision = plan.by_id().get(test.task_id or "")
    if decision is None:
        raise ValueError(f"hypothesis {hypothesis.id}: task {test.task_id} is not in the plan")
    for check in decision.checks:
        if check.metric == test.check:
            metric_test = HypothesisTest(metric=check.metric, op=check.op,
                                         threshold=check.value, task_id=test.task_id)
            return hypothesis.model_copy(update={"test": metric_test})
    raise ValueError(f"hypothesis {hypothesis.id}: task {test.task_id} has no check on "
                     f"{test.check!r}")


def evaluate(test: HypothesisTest, deciding: list[TaskOutcome], *, cycle: int,
             ) -> tuple[HypothesisStatus, str, list[Evidence]]:
    """The status a test gives on its deciding tasks, why, and the values it rests on."""
    if test.metric is None or test.op is None or test.threshold is None:
        return "inconclusive", f"{test.describe()} was not resolved against a plan", []
    if not deciding:
        return "inconclusive", f"no task reported {test.metric}", []
    check = Check(metric=test.metric, op=test.op, value=test.threshold)
    problems: list[str] = []
    held: list[str] = []
    failed: list[str] = []
    evidence: list[Evidence] = []
    for task in deciding:
        value = task.metrics.get(test.metric)
        if task.status != "completed":
            problems.append(f"task {task.task_id} did not complete ({task.status}"
                            f"{': ' + task.reason if task.reason else ''})")
            continue
        if value is None:
            problems.append(f"task {task.task_id} reported no verified {test.metric}")
            continue
        uncomparable = (f"task {task.task_id}: {test.metric} = {shown(value)} cannot be "
                        f"compared with {shown(test.threshold)}")
        if isinstance(value, float) and math.isnan(value):
            problems.append(uncomparable)
            continue
        try:
            holds = check.holds(value)
        except TypeError:
            problems.append(uncomparable)
            continue
        evidence.append(Evidence(task_id=task.task_id, metric=test.metric, value=value,
                                 cycle=cycle))
        (held if holds else failed).append(f"{test.metric} = {shown(value)} "
                                           f"(task {task.task_id})")
    wanted = f"{test.op} {shown(test.threshold)}"
    if problems:
        return "inconclusive", "; ".join(problems), evidence
    if held and failed:
        return ("inconclusive", f"evidence disagrees on {wanted}: {', '.join(held)} holds, "
                f"{', '.join(failed)} does not", evidence)
    if held:
        return "supported", f"{', '.join(held)} {wanted}", evidence
    return "refuted", f"{', '.join(failed)}, not {wanted}", evidence


def judge(tree: HypothesisTree, summary: CycleSummary) -> list[Verdict]:
    """Verdicts on the hypotheses ``summary``'s tasks tested, in tree order."""
    verdicts: list[Verdict] = []
    for hypothesis in tree.hypotheses:
        linked = [t for t in summary.tasks if t.hypothesis == hypothesis.id]
        if not linked:
            continue
        test = hypothesis.test
        deciding = ([t for t in summary.tasks if t.task_id == test.task_id]
                    if test.task_id else linked)
        status, reason, evidence = evaluate(test, deciding, cycle=summary.cycle)
        if test.task_id and not deciding:
            reason = f"task {test.task_id} did not run this cycle"
        verdicts.append(Verdict(hypothesis=hypothesis.id, status=status,
                                reason=clip(f"{hypothesis.id} {status}: {reason}", TEXT_CHARS),
                                evidence=evidence[-MAX_EVIDENCE:]))
    return verdicts


def apply(tree: HypothesisTree, verdicts: list[Verdict], cycle: int,
          ) -> tuple[HypothesisTree, list[Verdict]]:
    """The tree after a cycle's verdicts, and the verdicts marked ``settled`` where they decided.

    Evidence is added (the latest :data:`MAX_EVIDENCE` kept); an inconclusive verdict leaves
    a decided hypothesis's status alone.
    """
    changed: list[Hypothesis] = []
    marked: list[Verdict] = []
    for verdict in verdicts:
        record = tree.get(verdict.hypothesis)
        evidence = [*record.evidence, *verdict.evidence][-MAX_EVIDENCE:]
        settled = verdict.status in DECIDED and record.status != verdict.status
        if verdict.status in DECIDED:
            update = {"status": verdict.status, "evidence": evidence,
                      "decided_in": cycle if settled else record.decided_in}
        elif record.status in DECIDED:
            update = {"evidence": evidence}
        else:
            update = {"status": verdict.status, "evidence": evidence, "decided_in": None}
        changed.append(record.model_copy(update=update))
        marked.append(verdict.model_copy(update={"settled": settled}))
    return tree.replaced(changed), marked


def criteria_hold(tests: list[HypothesisTest], summary: CycleSummary) -> tuple[bool, str]:
    """Whether every acceptance criterion holds on the cycle's verified metrics, and why.

    A criterion naming a task is decided by that task; one naming none by every completed
    task that reported its metric. No criteria never hold (a study needs some to accept).
    """
    if not tests:
        return False, "no acceptance criteria"
    said: list[str] = []
    for test in tests:
        deciding = ([t for t in summary.tasks if t.task_id == test.task_id] if test.task_id
                    else [t for t in summary.tasks
                          if t.status == "completed" and test.metric in t.metrics])
        status, reason, _ = evaluate(test, deciding, cycle=summary.cycle)
        if status != "supported":
            return False, f"{test.describe()} does not hold: {reason}"
        said.append(reason)
    return True, "; ".join(said)
