"""What one cycle leaves the next: its summary, and the failed and deferred tasks carried on.

:func:`summarize` turns a cycle's report (a :class:`RunReport`) into the bounded
:class:`CycleSummary` a study keeps and the next planning reads: per task its status,
reason, verified metrics (a completed task's only), checks passed of declared, wall time
against the plan's estimate (``estimated_resources``: ``time_s``, ``duration_s``,
``minutes``, ``hours``, ``compute_hours`` or ``gpu_hours``; ``cost_usd``), cost, and for an
unfinished task its diagnosis. The tasks linked to a hypothesis and the unfinished ones are
listed first, so the bound never drops the evidence or a failure before a plain success.

Each task's kind is kept, and its estimate calibrated by the study's calibration of that kind
(``workflows.contracts.resources``); recording the cycle moves each kind's calibration by its
completed tasks' actuals (:func:`actuals`).

Failed and deferred tasks are carried forward, with their diagnosis, until a later cycle
completes a task of the same id; when more than :data:`MAX_CARRIED` wait, the oldest are
dropped and counted (``StudyState.carried_dropped``), never silently. :func:`close_cycle`
is the whole step after a cycle, for the study workflow: join the plan's hypotheses, judge
them, decide by the rules, mark what an escalation abandons, and record the cycle in the
state.
"""

from __future__ import annotations

from typing import Any

from workflows.common.cuts import keep_mapping
from workflows.contracts.alternatives import Metric
from workflows.contracts.estimates import (
    MetricValue,
    estimate_of,
    interval,
    number,
    split_name,
)
from workflows.contracts.hypotheses import HypothesisTree
from workflows.contracts.kinds import task_kind
from workflows.contracts.kpis import estimated_seconds
from workflows.contracts.plaintext import clip
from workflows.contracts.plan import Decision
from workflows.contracts.resources import Calibration, calibrated_seconds, recalibrated
from workflows.contracts.results import RunReport, TaskResult
from workflows.contracts.study import (
    FULL_SUMMARIES,
    MAX_BLOCKERS,
    MAX_CARRIED,
    MAX_DEFERRED,
    MAX_METRICS,
    MAX_OUTCOMES,
    TASKS_CUT,
    TEXT_CHARS,
    CarriedTask,
    CycleDecision,
    CycleSummary,
    DeferredPatch,
    StudyPolicy,
    StudyState,
    TaskOutcome,
)
from workflows.contracts.words import plural
from workflows.study import escalation, rules, verdicts


def summarize(report: RunReport, cycle: int, key_metric: Metric | None = None,
              wanted: frozenset[str] = frozenset(),
              calibration: dict[str, Calibration] | None = None, *,
              metrics: int = MAX_METRICS) -> CycleSummary:
    """The summary of one cycle's run, bounded (see ``workflows.contracts.study``).

    ``wanted`` are metric names kept before any other (those hypotheses and criteria test;
    a task's own checks' metrics come first too); ``calibration`` gives each estimate its
    calibrated value (by the task's kind); ``metrics`` is the most verified metrics a task
    outcome keeps (the study's state keeps :data:`MAX_METRICS`).
    """
    decisions = report.plan.by_id() if report.plan else {}
    if key_metric is not None:
        wanted = wanted | {key_metric.name}
    outcomes = [_calibrated(_outcome(t, decisions.get(t.task_id), wanted, metrics),
                            calibration or {}) for t in report.tasks]
    outcomes.sort(key=lambda o: (o.hypothesis is None and o.status == "completed"))
    unfinished = [o for o in outcomes if o.status != "completed"]
    deferred = [DeferredPatch(task_id=t.task_id, root_cause=clip(n.root_cause, TEXT_CHARS),
                              likely_fix=clip(n.likely_fix, TEXT_CHARS), confidence=n.confidence)
                for t in report.tasks for n in t.reflections if n.decision == "defer"]
    omitted: list[str] = []
    if len(outcomes) > MAX_OUTCOMES:
        omitted.append(f"{plural(len(outcomes) - MAX_OUTCOMES, 'task')}{TASKS_CUT}")
    if len(deferred) > MAX_DEFERRED:
        omitted.append(plural(len(deferred) - MAX_DEFERRED, "deferred patch", "deferred patches"))
    return CycleSummary(
        cycle=cycle, run_id=report.run_id, plan_sha256=report.plan_sha256,
        status=report.status, tasks=outcomes[:MAX_OUTCOMES], tasks_total=len(outcomes),
        unfinished=len(unfinished),
        blockers=[clip(f"task {o.task_id} {o.status}: {o.reason}", TEXT_CHARS)
                  for o in unfinished[:MAX_BLOCKERS]],
        deferred=deferred[:MAX_DEFERRED], cost_usd=report.model.usage.cost_usd,
        wall_s=max(0.0, (report.finished_at - report.started_at).total_seconds()),
        key_value=(key := _key_value(outcomes, key_metric)),
        key_task=(source := _key_task(outcomes, key_metric, key)),
        key_ci=_key_ci(outcomes, key_metric, source), omitted=omitted)


def _key_task(outcomes: list[TaskOutcome], metric: Metric | None, value: float | None) -> str:
    """The first task whose verified value of ``metric`` is ``value`` (empty: none)."""
    if metric is None or value is None:
        return ""
    return next((o.task_id for o in outcomes if number(o.metrics.get(metric.name)) == value), "")


def _key_ci(outcomes: list[TaskOutcome], metric: Metric | None,
            task_id: str) -> tuple[float, float] | None:
    """The interval of the key value, where its task wrote the metric as an estimate."""
    if metric is None or not task_id:
        return None
    raw = next(o.metrics.get(metric.name) for o in outcomes if o.task_id == task_id)
    return interval(raw)


def carry_forward(carried: list[CarriedTask], summary: CycleSummary,
                  ) -> tuple[list[CarriedTask], int]:
    """Tasks still to carry after ``summary``'s cycle, and how many the bound dropped."""
    ran = {o.task_id for o in summary.tasks}
    kept = [c for c in carried if c.task_id not in ran]
    kept += [CarriedTask(task_id=o.task_id, cycle=summary.cycle, status=o.status,
                         reason=o.reason, diagnosis=o.diagnosis, action=o.action)
             for o in summary.tasks if o.status != "completed"]
    dropped = max(0, len(kept) - MAX_CARRIED)
    return kept[dropped:], dropped


def record(state: StudyState, summary: CycleSummary, tree: HypothesisTree) -> StudyState:
    """``state`` with ``summary``'s cycle added.

    Its verdicts are kept without their evidence (the tree holds it), and summaries older
    than the last :data:`FULL_SUMMARIES` are reduced to their headlines.
    """
    kept = [v.model_copy(update={"evidence": []}) for v in summary.verdicts]
    summaries = [*state.summaries, summary.model_copy(update={"verdicts": kept})]
    cut = len(summaries) - FULL_SUMMARIES
    summaries = [s.headline() if i < cut else s for i, s in enumerate(summaries)]
    carried, dropped = carry_forward(state.carried, summary)
    return state.model_copy(update={
        "tree": tree, "summaries": summaries, "carried": carried,
        "calibration": recalibrated(state.calibration, actuals(summary)),
        "carried_dropped": state.carried_dropped + dropped,
        "spent_usd": state.spent_usd + summary.cost_usd, "cycles": state.cycles + 1})


def close_cycle(state: StudyState, report: RunReport) -> StudyState:
    """The study's state after one cycle's report: verdicts applied, the rules' decision made.

    Raises:
        ValueError: the cycle's plan proposes hypotheses that contradict the study's tree.
    """
    tree = verdicts.adopt(state.tree, report.plan) if report.plan else state.tree
    summary = summarize(report, state.cycles + 1, state.policy.key_metric,
                        tested(tree, state.policy), state.calibration)
    tree, judged = verdicts.apply(tree, verdicts.judge(tree, summary), summary.cycle)
    summary = summary.model_copy(update={"verdicts": judged})
    decision = rules.decide(state.policy, tree, [*state.summaries, summary],
                            state.spent_usd + summary.cost_usd)
    tree = escalation.abandoned(tree, decision, summary.cycle)
    return record(state, summary.model_copy(update={"decision": decision}), tree)


def tested(tree: HypothesisTree, policy: StudyPolicy) -> frozenset[str]:
    """The metrics the hypotheses' tests and the acceptance criteria name (kept first)."""
    return frozenset(t.metric for t in [*(h.test for h in tree.hypotheses),
                                        *policy.acceptance] if t.metric)


def actuals(summary: CycleSummary) -> dict[str, list[tuple[float, float]]]:
    """Each kind's ``(estimated_s, actual_s)`` of the cycle's completed tasks with both."""
    found: dict[str, list[tuple[float, float]]] = {}
    for o in summary.tasks:
        if o.status == "completed" and o.estimated_s and o.wall_s is not None and o.kind:
            found.setdefault(o.kind, []).append((o.estimated_s, o.wall_s))
    return found


def _calibrated(outcome: TaskOutcome, calibration: dict[str, Calibration]) -> TaskOutcome:
    """``outcome`` with its estimate's calibrated value, where its kind is calibrated."""
    known = calibration.get(outcome.kind)
    if outcome.estimated_s is None or known is None:
        return outcome
    return outcome.model_copy(update={
        "calibrated_s": round(calibrated_seconds(outcome.estimated_s, known), 3)})


def with_decision(state: StudyState, decision: CycleDecision) -> StudyState:
    """``state`` with the last cycle's decision replaced (a person's, at the ``cycle`` gate).

    A decision that is no escalation takes back what the rules' escalation abandoned.

    Raises:
        ValueError: no cycle has run.
    """
    if not state.summaries:
        raise ValueError("no cycle has run: there is no decision to replace")
    last = state.summaries[-1].model_copy(update={"decision": decision})
    tree = state.tree
    if not decision.escalated:  # a person's decision instead of an escalation keeps the line
        kept = [h.model_copy(update={"abandoned_in": None}) for h in tree.hypotheses
                if h.abandoned_in == last.cycle]
        tree = tree.replaced(kept) if kept else tree
    return state.model_copy(update={"summaries": [*state.summaries[:-1], last], "tree": tree})


def _outcome(result: TaskResult, decision: Decision | None, wanted: frozenset[str],
             bound: int = MAX_METRICS) -> TaskOutcome:
    done = result.status == "completed"
    wanted = wanted | {c.check.metric for c in result.checks}
    wall = (max(0.0, (result.finished_at - result.started_at).total_seconds())
            if result.started_at and result.finished_at else None)
    estimate = (decision.estimated_resources if decision else None) or {}
    return TaskOutcome(
        task_id=result.task_id, status=result.status,
        reason=clip(result.status_reason, TEXT_CHARS),
        hypothesis=decision.hypothesis if decision else None,
        **(_plain(result.metrics, wanted, bound) if done else {}),
        checks_passed=sum(c.passed for c in result.checks),
        checks_declared=len(decision.checks) if decision else len(result.checks),
        wall_s=wall, estimated_s=estimated_seconds(estimate),
        kind=task_kind(result.action, result.job),
        cost_usd=result.model.usage.cost_usd,
        estimated_cost_usd=_number(estimate.get("cost_usd")),
        diagnosis="" if done else _diagnosis(result),
        action=clip(result.action, TEXT_CHARS))


def _diagnosis(result: TaskResult) -> str:
    if result.reflections:
        note = result.reflections[-1]
        return clip(f"{note.root_cause}; likely fix: {note.likely_fix}", TEXT_CHARS)
    return clip(result.status_reason, TEXT_CHARS)


def _plain(metrics: dict[str, Any], wanted: frozenset[str], bound: int) -> dict[str, Any]:
    """An outcome's ``metrics`` and ``metrics_omitted``: what it keeps, and what it left out.

    At most ``bound`` plain values (text cut) or well-formed estimates, the wanted
    first (a test's ``r2.ci_low`` wants ``r2``), then by name.
    """
    wanted = wanted | {split_name(n, metrics)[0] for n in wanted}
    usable = {name: value for name in sorted(metrics, key=lambda n: (n not in wanted, n))
              if (value := _usable(metrics[name])) is not None}
    chosen, cut = keep_mapping(usable, bound, what="metric", first=wanted)
    kept = {clip(name, 64): value for name, value in chosen.items()}
    return {"metrics": kept, "metrics_omitted": clip(cut, TEXT_CHARS)}


def _usable(value: Any) -> MetricValue | None:
    """A metric value as an outcome keeps it (text cut), or None when it keeps no such value."""
    if isinstance(value, str):
        return clip(value, 64)
    if isinstance(value, bool | int | float):
        return value
    return estimate_of(value)


def _key_value(outcomes: list[TaskOutcome], metric: Metric | None) -> float | None:
    if metric is None:
        return None
    values = [v for o in outcomes if (v := number(o.metrics.get(metric.name))) is not None]
    if not values:
        return None
    return min(values) if metric.direction == "minimize" else max(values)


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None
