"""The study section of the planner's and plan reviewer's messages: where a study stands.

It opens with what the study stops on (the cycle and the limit, the acceptance criteria, the
key metric, the budget: :mod:`activities.agents.study_facts`). A study's cycle is planned
from what happened: the hypothesis tree with its evidence, each previous cycle's task
outcomes (status, reason, verified metrics, checks, actual against estimated time and cost),
blockers, deferred patches, the failed and deferred tasks carried forward with their
diagnosis, the earlier completed tasks a task may reuse (``c1.data``: their verified files
with their first lines, not run again), and the decision that asked for this cycle. The
section is rendered deterministically and never takes more than
:data:`STUDY_CONTEXT_BYTES` (UTF-8): the least relevant lines go first (an older cycle's
plain successes and reusable tasks, then the rest of the older cycle, hypotheses already
decided, carried tasks from the oldest, the latest cycle's plain successes and reusable
tasks, open hypotheses after the first :data:`OPEN_KEPT`, the rest of the latest cycle, the
first open hypotheses; those the decision names go last), and the section says what was
left out.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from activities.agents.previews import Reused
from activities.agents.prompting import bullets
from activities.agents.study_facts import (
    Reader,
    calibration_text,
    how_text,
    hypothesis_text,
    policy_text,
    reuse_text,
    rough,
)
from workflows.contracts.hypotheses import DECIDED
from workflows.contracts.plaintext import clip
from workflows.contracts.study import (
    CarriedTask,
    CycleDecision,
    CycleSummary,
    StudyContext,
    TaskOutcome,
)
from workflows.contracts.words import plural
from workflows.study.verdicts import shown

STUDY_CONTEXT_BYTES = 24_000
"""The most the study section of a planner's message may take, in UTF-8 bytes."""
REASON_CHARS = 1000
"""A decision's reason is shown up to this many characters."""
OPEN_KEPT = 10
"""Open hypotheses (the first in the tree) kept before the latest cycle's failures."""
UNTIMED = (" Measured durations (tasks' times, cycles' wall times, time calibration) are "
           "left out: this run's model exchanges are recorded or replayed, and a replay "
           "must ask what its recording asked.")
"""Said after the study's rules when ``timed`` is off."""
PLURALS = {"hypothesis": "hypotheses", "carried task": "carried tasks",
           "reusable task": "reusable tasks"}


@dataclass(frozen=True)
class _Line:
    """One line of the section that may be cut: where it goes, its text, when it is cut."""

    block: str
    text: str
    rank: tuple[int, int]
    """Cut order: the lowest first."""
    what: str
    """What it is, for the note on what was cut (``task outcome``)."""
    where: str = ""
    """Where it is, for that note (``of cycle 2``)."""


def study_section(ctx: StudyContext, budget: int = STUDY_CONTEXT_BYTES,
                  reused: Reused | None = None, reader: Reader = "planner",
                  timed: bool = True) -> str:
    """The study's context as the body of a "Study" section, within ``budget``.

    Args:
        ctx: where the study stands.
        budget: the most the section may take, in UTF-8 bytes.
        reused: the reusable tasks' verified files with their first lines (none: their
            actions only).
        reader: the planner, or the plan reviewer (told what to check instead of how to
            plan).
        timed: show measured durations (a task's time, a cycle's wall time, the time
            calibration). A recorded or replayed run leaves them out and says so: they
            differ between two runs of the same study, so a replay would not find the
            request its recording answered.
    """
    if not timed:
        ctx = _untimed(ctx)
    lines = _lines(ctx, reused or {})
    order = sorted(range(len(lines)), key=lambda i: lines[i].rank)
    low, high = 0, len(order)
    while low < high:  # fewest cuts that fit; the cut note grows slowly, so check after
        mid = (low + high) // 2
        if _fits(ctx, lines, set(order[:mid]), budget, reader, timed):
            high = mid
        else:
            low = mid + 1
    while low < len(order) and not _fits(ctx, lines, set(order[:low]), budget, reader,
                                         timed):
        low += 1
    text = _render(ctx, lines, set(order[:low]), budget, reader, timed)
    data = text.encode()
    if len(data) <= budget:
        return text
    note = f"\n[... cut at {budget:,} bytes ...]"  # only if the fixed parts alone are too long
    return data[:max(0, budget - len(note.encode()))].decode(errors="ignore") + note


def _fits(ctx: StudyContext, lines: list[_Line], cut: set[int], budget: int,
          reader: Reader, timed: bool) -> bool:
    return len(_render(ctx, lines, cut, budget, reader, timed).encode()) <= budget


def _untimed(ctx: StudyContext) -> StudyContext:
    """``ctx`` without what was measured in seconds: tasks' times, calibrations."""
    previous = [s.model_copy(update={"tasks": [t.model_copy(update={
        "wall_s": None, "calibrated_s": None}) for t in s.tasks]}) for s in ctx.previous]
    return ctx.model_copy(update={"previous": previous, "calibration": {}})


def _render(ctx: StudyContext, lines: list[_Line], cut: set[int], budget: int,
            reader: Reader, timed: bool) -> str:
    kept: dict[str, list[str]] = {}
    for i, line in enumerate(lines):
        if i not in cut:
            kept.setdefault(line.block, []).append(line.text)
    parts = [policy_text(ctx) + ("" if timed else UNTIMED), _decision_line(ctx.decision),
             "### Hypothesis tree\n\n" + (bullets(kept.get("tree", [])) or "(none yet)")]
    for summary in ctx.previous:
        parts.append(_cycle_block(summary, ctx.decision, kept, timed))
    parts.append("### Earlier tasks you may reuse (`reuse`: their files, not run again)\n\n"
                 + (bullets(kept.get("reuse", [])) or "(none)"))
    parts.append("### Carried forward (failed or deferred, not yet completed)\n\n"
                 + (bullets(kept.get("carried", [])) or "(none)"))
    if ctx.calibration:
        parts.append(calibration_text(ctx))
    title = "How to review this cycle's plan" if reader == "plan_reviewer" else \
        "How to plan this cycle"
    parts.append(f"### {title}\n\n" + how_text(ctx, reader))
    if cut:
        counts = Counter((lines[i].what, lines[i].where) for i in cut)
        left = ", ".join(f"{plural(n, what, PLURALS.get(what, ''))}{where}"
                         for (what, where), n in sorted(counts.items()))
        parts.append(f"### Left out to fit {budget:,} bytes\n\n{left} (the oldest and "
                     "least relevant first).")
    return "\n\n".join(parts)


def _decision_line(decision: CycleDecision | None) -> str:
    if decision is None:
        return "No decision asked for it: it is the study's first cycle."
    pursue = f": pursue {decision.pursue}" if decision.pursue else ""
    about = f" (about {', '.join(decision.hypotheses)})" if decision.hypotheses else ""
    return (f"Decision for this cycle: {decision.action}{pursue}, because "
            f"{clip(decision.reason, REASON_CHARS)}{about}; decided by {decision.by}."
            + _escalation_text(decision))


def _escalation_text(decision: CycleDecision) -> str:
    """What an escalation asks of the planner (nothing for another decision)."""
    if not decision.escalated:
        return ""
    dropped = ", ".join(decision.abandon) or "the approach of the last cycles"
    return (f" ESCALATION (fail fast): abandon {dropped}; do not plan another fix of it. Try "
            "an alternative: " + (f"the hypothesis {decision.pursue}, " if decision.pursue
                                  else "") + "a new sibling hypothesis or a different approach "
            "(another method, data or model).")


def _cycle_block(summary: CycleSummary, decision: CycleDecision | None,
                 kept: dict[str, list[str]], timed: bool = True) -> str:
    key = f", key value {shown(summary.key_value)}" if summary.key_value is not None else ""
    wall = f", wall {rough(summary.wall_s)}" if timed else ""
    head_line = (f"### Cycle {summary.cycle}: {summary.status}, "
                 f"{plural(summary.tasks_total, 'task')} ({summary.unfinished} unfinished), "
                 f"cost ${summary.cost_usd:.4f}{wall}{key}")
    parts = [head_line]
    if summary.decision is not None and summary.decision != decision:
        after = summary.decision
        pursue = f": pursue {after.pursue}" if after.pursue else ""
        parts.append(f"Decision after it: {after.action}{pursue}, because "
                     f"{clip(after.reason, REASON_CHARS)}; decided by {after.by}.")
    if summary.omitted:
        parts.append("Left out of its summary: " + clip("; ".join(summary.omitted), 300))
    for block, title in (("verdicts", "Verdicts"), ("tasks", "Task outcomes"),
                         ("blockers", "Blockers"), ("deferred", "Deferred patches")):
        shown_lines = kept.get(f"{block}-{summary.cycle}", [])
        if shown_lines:
            parts.append(f"{title}:\n{bullets(shown_lines)}")
    return "\n\n".join(parts)


def _lines(ctx: StudyContext, reused: Reused) -> list[_Line]:
    """Every line that may be cut, with its cut rank (see the module's docstring)."""
    lines: list[_Line] = []
    decision = ctx.decision
    named = {*decision.hypotheses, decision.pursue or ""} if decision else set[str]()
    open_ids = [h.id for h in ctx.tree.open()]
    for n, h in enumerate(ctx.tree.hypotheses):
        if h.id in named:
            rank = (8, 0)
        elif h.status in DECIDED:
            rank = (2, h.decided_in or 0)
        else:
            rank = (7 if open_ids.index(h.id) < OPEN_KEPT else 5, -n)
        lines.append(_Line("tree", hypothesis_text(h), rank, "hypothesis"))
    latest = len(ctx.previous) - 1
    for age, summary in enumerate(ctx.previous):
        older = age < latest
        lines.extend(_summary_lines(summary, older))
    reusable = ctx.reusable()
    for n, (ref, task) in enumerate(reusable.items()):
        older = ref.partition(".")[0] != f"c{ctx.previous[-1].cycle}"
        text = reuse_text(ref, task, reused.get(ref))
        lines.append(_Line("reuse", text, (0 if older else 4, len(reusable) - n),
                           "reusable task"))
    for n, carried in enumerate(ctx.carried):
        lines.append(_Line("carried", _carried_text(carried), (3, n), "carried task"))
    return lines


def _summary_lines(summary: CycleSummary, older: bool) -> list[_Line]:
    c = summary.cycle
    where = f" of cycle {c}"
    lines: list[_Line] = []
    count = len(summary.tasks)
    for n, task in enumerate(summary.tasks):
        plain = task.status == "completed" and task.hypothesis is None
        tier = (0 if plain else 1) if older else (4 if plain else 6)
        lines.append(_Line(f"tasks-{c}", _outcome_text(task), (tier, count - n),
                           "task outcome", where))
    rank = (1, 0) if older else (6, count + 1)  # the latest's after its task outcomes
    lines += [_Line(f"verdicts-{c}", v.line(), rank, "verdict", where)
              for v in summary.verdicts]
    lines += [_Line(f"blockers-{c}", b, rank, "blocker", where) for b in summary.blockers]
    lines += [_Line(f"deferred-{c}", f"task {d.task_id}: {d.root_cause}; likely fix: "
                    f"{d.likely_fix} (confidence {d.confidence:.2f})", rank,
                    "deferred patch", where) for d in summary.deferred]
    return lines


def _outcome_text(o: TaskOutcome) -> str:
    link = f" (hypothesis {o.hypothesis})" if o.hypothesis else ""
    metrics = ", ".join(f"{k} = {shown(v)}" for k, v in o.metrics.items())
    parts = [f"verified metrics: {metrics}" if metrics else "no verified metrics"]
    if o.metrics_omitted:
        parts.append(o.metrics_omitted)
    if o.checks_declared:
        parts.append(f"checks {o.checks_passed}/{o.checks_declared} passed")
    if o.wall_s is not None:
        estimate = f"estimated {rough(o.estimated_s)}" if o.estimated_s is not None \
            else "no estimate"
        if o.calibrated_s is not None:
            estimate += f", calibrated {rough(o.calibrated_s)}"
        parts.append(f"time {rough(o.wall_s)} ({estimate})")
    estimate = (f"estimated ${o.estimated_cost_usd:.4f}" if o.estimated_cost_usd is not None
                else "no estimate")
    parts.append(f"cost ${o.cost_usd:.4f} ({estimate})")
    parts += [f"{name}: {text}" for name, text in (("reason", o.reason),
                                                  ("diagnosis", o.diagnosis),
                                                  ("action", o.action)) if text]
    return f"{o.task_id} [{o.status}]{link}: " + "; ".join(parts)


def _carried_text(t: CarriedTask) -> str:
    parts = [f"{name}: {text}" for name, text in (("reason", t.reason),
                                                  ("diagnosis", t.diagnosis),
                                                  ("action", t.action)) if text]
    return f"task {t.task_id} from cycle {t.cycle} [{t.status}]" + (
        ": " + "; ".join(parts) if parts else "")
