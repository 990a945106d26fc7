"""Hypothesis verdicts from verified metrics, never from a model's words.

A hypothesis is *tested* in a cycle when a task of that cycle's plan links to it
(``Decision.hypothesis``). Its deciding tasks are then its test's ``task_id`` if it names one,
else every linked task. Each deciding task must have completed (its evidence verified): a
task that did not → ``inconclusive``; a completed task that reported no verified value of the
test's metric, or a value that cannot be compared → ``inconclusive``. Otherwise the test is
the plan check's own comparison (:meth:`Check.holds`, the same exact semantics as a task's
``checks``): holding for every deciding task → ``supported``, for none → ``refuted``, for
some → ``inconclusive`` (the evidence disagrees). A value reported with an interval is
judged on the interval (``workflows.contracts.estimates.judge_interval``): a task whose
interval includes the threshold makes the verdict ``inconclusive``, and an acceptance
criterion so undecided is ``inconclusive`` too, never met.

An ``inconclusive`` verdict never undoes a hypothesis already supported or refuted; a
supported or refuted one replaces whatever was there.
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

from workflows.contracts.base import CheckOp, Scalar
from workflows.contracts.estimates import (
    INTERVAL,
    PARTS,
    Judged,
    estimate_of,
    judge_interval,
    part_of,
    percent,
    point,
    reading,
)
from workflows.contracts.estimates import shown as shown_metric
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
from workflows.contracts.plaintext import clip
from workflows.contracts.plan import Check, Plan
from workflows.contracts.study import TEXT_CHARS, CycleSummary, TaskOutcome


def shown(value: object) -> str:
    """A value as a reason says it: floats to four significant digits, the rest as written.

    An estimate reads with its interval: ``0.49 [0.421, 0.55] 95 %``.
    """
    return shown_metric(value)


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


class _Reading(NamedTuple):
    """One deciding task's reading of a test: how it judged, what it says, its evidence."""

    judged: Judged | None
    """``None``: the task gives no usable value (``said`` says why)."""
    said: str
    evidence: Evidence | None = None


def evaluate(test: HypothesisTest, deciding: list[TaskOutcome], *, cycle: int,
             ) -> tuple[HypothesisStatus, str, list[Evidence]]:
    """The status a test gives on its deciding tasks, why, and the values it rests on."""
    status, reason, evidence, _ = assess(test, deciding, cycle=cycle)
    return status, reason, evidence


def assess(test: HypothesisTest, deciding: list[TaskOutcome], *, cycle: int,
           ) -> tuple[HypothesisStatus, str, list[Evidence], bool]:
    """As :func:`evaluate`, and whether it is inconclusive only because an interval straddles.

    A metric with an interval is judged on it (:func:`judge_interval`): every value in the
    interval must hold for ``supported``, none for ``refuted``; otherwise ``inconclusive``.
    """
    if test.metric is None or test.op is None or test.threshold is None:
        return "inconclusive", f"{test.describe()} was not resolved against a plan", [], False
    if not deciding:
        return "inconclusive", f"no task reported {test.metric}", [], False
    readings = [_read(test.metric, test.op, test.threshold, task, cycle) for task in deciding]
    evidence = [r.evidence for r in readings if r.evidence is not None]
    problems = [r.said for r in readings if r.judged is None]
    if problems:
        return "inconclusive", "; ".join(problems), evidence, False
    wanted = f"{test.op} {shown(test.threshold)}"
    held = [r.said for r in readings if r.judged == "supported"]
    failed = [r.said for r in readings if r.judged == "refuted"]
    straddled = [r.said for r in readings if r.judged == "inconclusive"]
    if failed and straddled:
        return ("inconclusive", f"evidence disagrees on {wanted}: {', '.join(failed)} does "
                f"not hold; {'; '.join([*held, *straddled])}", evidence, False)
    if straddled:
        return "inconclusive", "; ".join(straddled), evidence, True
    if held and failed:
        return ("inconclusive", f"evidence disagrees on {wanted}: {', '.join(held)} holds, "
                f"{', '.join(failed)} does not", evidence, False)
    if held:
        return "supported", f"{', '.join(held)} {wanted}", evidence, False
    return "refuted", f"{', '.join(failed)}, not {wanted}", evidence, False


def _read(name: str, op: CheckOp, threshold: Scalar, task: TaskOutcome, cycle: int,
          ) -> _Reading:
    """How ``task``'s verified metrics judge ``name op threshold``."""
    raw, part = reading(task.metrics, name)
    if task.status != "completed":
        return _Reading(None, f"task {task.task_id} did not complete ({task.status}"
                              f"{': ' + task.reason if task.reason else ''})")
    if raw is None:
        return _Reading(None, f"task {task.task_id} reported no verified {name}")
    estimate = estimate_of(raw)
    ci = estimate.ci if estimate is not None and part in (None, INTERVAL) else None
    value = part_of(raw, part) if part in PARTS else point(raw)
    where = f"(task {task.task_id})"
    if value is None or (part == INTERVAL and ci is None):
        what = "interval" if part == INTERVAL else part or "value"
        return _Reading(None, f"task {task.task_id}: {name} has no {what} to test")
    evidence = Evidence(task_id=task.task_id, metric=name, value=value, cycle=cycle, ci=ci,
                        level=estimate.level if ci is not None and estimate else None)
    number = None if isinstance(threshold, str | bool) else float(threshold)
    if ci is not None and number is not None:
        judged = judge_interval(ci[0], ci[1], op, number)
        said = (f"the {percent(evidence.level or 0)} interval [{shown(ci[0])}, {shown(ci[1])}] "
                f"of {name} {where} includes {shown(threshold)}" if judged == "inconclusive"
                else f"{evidence.shown()} {where}")
        return _Reading(judged, said, evidence)
    try:
        holds = Check(metric=name, op=op, value=threshold).holds(value)
    except TypeError:
        holds = None
    if holds is None or (isinstance(value, float) and math.isnan(value)):
        return _Reading(None, f"task {task.task_id}: {name} = {shown(value)} cannot be "
                              f"compared with {shown(threshold)}")
    return _Reading("supported" if holds else "refuted", f"{evidence.shown()} {where}",
                    evidence)


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


Acceptance = Literal["met", "inconclusive", "unmet"]


def criteria_hold(tests: list[HypothesisTest], summary: CycleSummary) -> tuple[bool, str]:
    """Whether every acceptance criterion holds on the cycle's verified metrics, and why."""
    status, why = acceptance(tests, summary)
    return status == "met", why


def acceptance(tests: list[HypothesisTest], summary: CycleSummary) -> tuple[Acceptance, str]:
    """Whether the acceptance criteria are met on the cycle's verified metrics, and why.

    A criterion naming a task is decided by that task; one naming none by every completed
    task that reported its metric. ``met`` when every criterion is supported; ``inconclusive``
    when none fails but some are undecided only because an interval includes the threshold
    (more evidence may settle it); else ``unmet``. No criteria are never met.
    """
    if not tests:
        return "unmet", "no acceptance criteria"
    said: list[str] = []
    open_: list[str] = []
    for test in tests:
        deciding = ([t for t in summary.tasks if t.task_id == test.task_id] if test.task_id
                    else [t for t in summary.tasks if t.status == "completed"
                          and reading(t.metrics, test.metric or "")[0] is not None])
        status, reason, _, straddles = assess(test, deciding, cycle=summary.cycle)
        if status == "inconclusive" and straddles:
            open_.append(f"{test.describe()}: {reason}")
        elif status != "supported":
            return "unmet", f"{test.describe()} does not hold: {reason}"
        else:
            said.append(reason)
    if open_:
        return "inconclusive", "; ".join(open_)
    return "met", "; ".join(said)

