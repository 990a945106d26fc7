"""The study synthesizer's message and the check of its citations.

The message holds the study's whole record as it ends: its question, how and after how many
cycles it ended, the acceptance criteria, the key metric and its direction, the hypothesis
tree with each verdict and its evidence (with intervals), each cycle's decision, key value
(with its interval) and every task's verified metrics, each line naming its cycle and task,
and the tasks that never completed. The study's state keeps whole only its latest cycles, and
:data:`~workflows.contracts.study.MAX_METRICS` metrics a task, so :func:`with_reports` reads
every cycle's tasks again from its report (newest first, up to :data:`SYNTHESIS_TASKS`
tasks), each with up to :data:`TASK_METRICS` verified metrics within
:data:`SYNTHESIS_METRICS` in all, cut by ``workflows.common.cuts`` (the metrics its checks,
the hypotheses' tests, the criteria and the key metric name first). Each part still bounded
says so (a cycle's ``omitted`` and a task's ``metrics_omitted``): a cycle whose report cannot
be read here keeps only its headline, whose key-metric task and the hypotheses' evidence
still name its verified values. An answer citing a cycle, a task or a metric the record does
not hold is sent back for repair (:func:`synthesis_of` raises ``ValueError``).
"""

from __future__ import annotations

from activities.agents.prompting import bullets, message, section
from activities.artifacts.store import ArtifactStore
from activities.reports.reading import read_report
from workflows.contracts.cycles import SynthesisRequest
from workflows.contracts.estimates import split_name
from workflows.contracts.hypotheses import Hypothesis
from workflows.contracts.plaintext import clip
from workflows.contracts.results import RunReport
from workflows.contracts.study import (
    HEADLINE_NOTE,
    MAX_METRICS,
    MAX_OUTCOMES,
    TASKS_CUT,
    CycleSummary,
    StudyState,
    TaskOutcome,
)
from workflows.contracts.synthesis import StudySynthesis, SynthesisOutput
from workflows.contracts.words import plural
from workflows.study.carry import summarize, tested
from workflows.study.verdicts import shown

REASON_CHARS = 600
SYNTHESIS_TASKS = 120
"""Task outcomes read again from the cycles' reports, the newest cycles first (an older
cycle past them keeps what the study's state holds of it, and says so)."""
SYNTHESIS_METRICS = 1_000
"""Verified metrics shown across those tasks: each task gets this share of them, at least
:data:`~workflows.contracts.study.MAX_METRICS` and at most :data:`TASK_METRICS`."""
TASK_METRICS = 40
"""The most verified metrics shown of one task."""


def with_reports(state: StudyState, store: ArtifactStore | None) -> StudyState:
    """``state`` with every cycle's task outcomes read again from its report, more metrics each.

    A cycle whose report cannot be read here (nor from ``store``) stays as the state holds it.
    """
    reports: dict[int, RunReport] = {}
    tasks = 0
    for s in reversed(state.summaries):
        report = read_report(s.results_json, s.results_sha256, store)
        if report is None or report.run_id != s.run_id:
            continue
        count = min(len(report.tasks), MAX_OUTCOMES)
        if tasks + count > SYNTHESIS_TASKS:
            break
        tasks, reports[s.cycle] = tasks + count, report
    bound = max(MAX_METRICS, min(TASK_METRICS, SYNTHESIS_METRICS // max(1, tasks)))
    wanted = tested(state.tree, state.policy)
    summaries = [_again(s, reports[s.cycle], state, wanted, bound) if s.cycle in reports
                 else s for s in state.summaries]
    return state.model_copy(update={"summaries": summaries})


def _again(summary: CycleSummary, report: RunReport, state: StudyState,
           wanted: frozenset[str], bound: int) -> CycleSummary:
    """``summary`` with its task outcomes from ``report``, up to ``bound`` metrics each."""
    again = summarize(report, summary.cycle, state.policy.key_metric, wanted, metrics=bound)
    return summary.model_copy(update={
        "tasks": again.tasks, "tasks_total": again.tasks_total,
        "unfinished": again.unfinished, "omitted": again.omitted})


def synthesis_message(req: SynthesisRequest) -> str:
    """The study synthesizer's facts: the study's question, rules, tree and cycles."""
    state = req.state
    key = state.policy.key_metric.name if state.policy.key_metric else "value"
    question = state.goal or f"The study of the plan {state.first_plan or state.study_id}"
    ended = (f"{req.status} after {state.cycles} of at most {state.policy.max_cycles} "
             f"cycles" + (f": {clip(req.reason, REASON_CHARS)}" if req.reason else ""))
    return message(
        section("The study's question", question),
        section("How the study ended", ended),
        section("What decides it", _rules(state)),
        section("Hypothesis tree (verdicts from verified metrics)",
                bullets(_hypothesis(h) for h in state.tree.hypotheses)),
        *(section(f"Cycle {s.cycle}", _cycle(s, key)) for s in state.summaries),
        section("Tasks that never completed",
                bullets(f"task {c.task_id} of cycle {c.cycle} [{c.status}]"
                        + (f": {clip(c.reason, REASON_CHARS)}" if c.reason else "")
                        for c in state.carried)
                + (f"\n({state.carried_dropped} older ones left out)"
                   if state.carried_dropped else "")))


def _rules(state: StudyState) -> str:
    policy = state.policy
    lines = [f"Acceptance criterion: `{t.describe()}`" for t in policy.acceptance] or [
        "No acceptance criterion was set."]
    if policy.key_metric is not None:
        better = "higher" if policy.key_metric.direction == "maximize" else "lower"
        lines.append(f"Key metric: `{policy.key_metric.name}` ({better} is better)")
    return bullets(lines)


def _hypothesis(h: Hypothesis) -> str:
    where = f"child of {h.parent}" if h.parent else "root"
    status = f"{h.status} in cycle {h.decided_in}" if h.decided_in else h.status
    text = (f"{h.id} ({where}) [{status}]: {h.statement.rstrip('.')}; test: "
            f"`{h.test.describe()}`")
    if h.concluded:
        text += f"; concluded {h.concluded}"
    if h.evidence:
        text += "; evidence: " + ", ".join(f"cycle {e.cycle}, task {e.task_id}: {e.shown()}"
                                           for e in h.evidence)
    return text


def _cycle(summary: CycleSummary, key_name: str) -> str:
    key = (f"key metric {key_name} = {shown(summary.key_value)}"
           + (f" [{shown(summary.key_ci[0])}, {shown(summary.key_ci[1])}]"
              if summary.key_ci else "")
           + (f" (task {summary.key_task})" if summary.key_task else "")
           if summary.key_value is not None else "no key metric value")
    d = summary.decision
    parts = [f"Run {summary.status}, {plural(summary.tasks_total, 'task')} ({summary.unfinished} "
             f"unfinished); {key}."]
    if d is not None:
        parts.append(f"Decision after it: {d.action}, because {clip(d.reason, REASON_CHARS)}.")
    if summary.tasks:
        parts.append("Its tasks' verified metrics (cite each as this cycle, its task and the "
                     "metric's name):\n\n"
                     + bullets(_outcome(summary.cycle, t) for t in summary.tasks))
    left_out = _left_out(summary)
    if left_out:
        parts.append(left_out)
    return "\n\n".join(parts)


def _left_out(summary: CycleSummary) -> str:
    """One line saying what the cycle's record leaves out (its own report has it), or ``""``.

    The cut task outcomes are counted once, whichever note of ``omitted`` named them.
    """
    hidden = summary.tasks_total - len(summary.tasks)
    others = [n for n in summary.omitted if n != HEADLINE_NOTE and not n.endswith(TASKS_CUT)]
    said: list[str] = []
    if hidden and not summary.tasks:
        said.append(f"its {plural(hidden, 'task outcome')} (an older cycle "
                    "keeps only its headline; its key-metric task and the tree's evidence "
                    "still name its verified values)")
    elif hidden:
        said.append(f"{plural(hidden, 'more task outcome')} (completed, "
                    "linked to no hypothesis)")
    said += others
    return (f"Left out here (the cycle's own report has it): {'; '.join(said)}."
            if said else "")


def _outcome(cycle: int, task: TaskOutcome) -> str:
    link = f" (hypothesis {task.hypothesis})" if task.hypothesis else ""
    metrics = "; ".join(f"{k} = {shown(v)}" for k, v in task.metrics.items())
    text = (f"cycle {cycle}, task {task.task_id} [{task.status}]{link}: "
            + (metrics or "no verified metric"))
    if task.metrics_omitted:
        text += f" ({task.metrics_omitted})"
    return text + (f"; reason: {clip(task.reason, REASON_CHARS)}" if task.reason else "")


def synthesis_of(state: StudyState, out: SynthesisOutput, model: str = "") -> StudySynthesis:
    """The answer as the report keeps it, once every citation is in the study's record.

    Raises:
        ValueError: a statement cites a cycle, task or metric the record does not hold, or
            cites neither a metric nor an artifact.
    """
    known = cited_record(state)
    cycles = {s.cycle for s in state.summaries}
    for n, statement in enumerate(out.statements, 1):
        for cite in statement.cites:
            if cite.cycle not in cycles:
                raise ValueError(f"statement {n} cites cycle {cite.cycle}, which did not run "
                                 f"(cycles: {', '.join(map(str, sorted(cycles))) or 'none'})")
            metrics = known.get((cite.cycle, cite.task_id))
            if metrics is None:
                raise ValueError(f"statement {n} cites task {cite.task_id!r}, which is not a "
                                 f"task of cycle {cite.cycle} in the record")
            if not cite.metric and not cite.artifact:
                raise ValueError(f"statement {n} cites task {cite.task_id!r} without a "
                                 "metric or artifact")
            if cite.metric and split_name(cite.metric, metrics)[0] not in metrics:
                raise ValueError(f"statement {n} cites metric {cite.metric!r}, which task "
                                 f"{cite.task_id!r} of cycle {cite.cycle} did not verify")
    return StudySynthesis(**out.model_dump(), model=model)


def cited_record(state: StudyState) -> dict[tuple[int, str], dict[str, object]]:
    """What a statement may cite: each (cycle, task) the record names, with its metrics.

    The cycles' task outcomes, the hypotheses' evidence and each cycle's key-metric task (an
    older cycle keeps only these), and the tasks that never completed (their artifacts).
    """
    known: dict[tuple[int, str], dict[str, object]] = {}
    for s in state.summaries:
        for t in s.tasks:
            known.setdefault((s.cycle, t.task_id), {}).update(t.metrics)
        key = state.policy.key_metric
        if s.key_task and key is not None and s.key_value is not None:
            known.setdefault((s.cycle, s.key_task), {}).setdefault(key.name, s.key_value)
    for h in state.tree.hypotheses:
        for e in h.evidence:
            known.setdefault((e.cycle, e.task_id), {}).setdefault(e.metric, e.value)
    for c in state.carried:
        known.setdefault((c.cycle, c.task_id), {})
    return known
