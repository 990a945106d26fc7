"""Fail fast: a study whose fixes keep failing, or that stalls, escalates to a pivot.

The meta-skills loop: after repeated failed fixes, stop fixing and try something else.
After a cycle, :func:`escalation` decides whether the study escalates, before its
no-progress stop (rule 4 of ``workflows.study.rules``) would end it:

- **Failed fixes** — a *line* (a hypothesis, or a task where no task links to one) failed
  in the cycle, and the decisions of the ``escalate_after_fixes`` cycles before it (default
  :data:`~workflows.contracts.study.ESCALATE_AFTER_FIXES`, 2) were all ``fix`` of it: its
  fixes failed that many times in a row.
- **Stalled** — the last ``escalate_after_stalled`` cycles (default
  :data:`~workflows.contracts.study.ESCALATE_AFTER_STALLED`, 2) made no progress (no
  hypothesis decided, key metric not improved, no fewer unfinished tasks), and no escalation
  asked for any of them. After an escalation's pivot that makes no progress either, the
  no-progress rule stops the study.

The escalation is a ``pivot`` with ``escalated`` set: it abandons the failing lines (the
tree marks such hypotheses ``abandoned_in`` the cycle, :func:`abandoned`, and no longer
counts them open) and pursues the first open hypothesis left, else none (the planner is told
to propose an alternative hypothesis or approach). Pure and deterministic.
"""

from __future__ import annotations

from workflows.contracts.base import COMMENT_CHARS
from workflows.contracts.hypotheses import HypothesisTree
from workflows.contracts.plaintext import clip
from workflows.contracts.study import CycleDecision, CycleSummary, StudyPolicy
from workflows.contracts.words import plural


def failing_lines(summary: CycleSummary) -> list[str]:
    """The lines that failed in a cycle, each a hypothesis or a task.

    Its failed tasks' hypotheses (each task's id when no task of the cycle links to one) and
    its inconclusive hypotheses.
    """
    linked = [t for t in summary.tasks if t.hypothesis]
    failed = [t.hypothesis or t.task_id for t in (linked or summary.tasks)
              if t.status != "completed"]
    inconclusive = [v.hypothesis for v in summary.verdicts if v.status == "inconclusive"]
    return [*dict.fromkeys([*failed, *inconclusive])]


def failed_fixes(summaries: list[CycleSummary], line: str) -> int:
    """How many fixes of ``line`` failed in a row up to the last cycle (0: it did not fail)."""
    if not summaries or line not in failing_lines(summaries[-1]):
        return 0
    count = 0
    for earlier in reversed(summaries[:-1]):
        decision = earlier.decision
        if decision is None or decision.action != "fix" or line not in decision.fixes:
            break
        count += 1
    return count


def escalation(policy: StudyPolicy, tree: HypothesisTree, summaries: list[CycleSummary],
               stalled: int) -> CycleDecision | None:
    """The escalation after the last of ``summaries``, or None when the study does not escalate.

    Args:
        policy: the thresholds (``escalate_after_fixes``, ``escalate_after_stalled``).
        tree: the hypothesis tree with the last cycle's verdicts applied.
        summaries: every cycle so far, the last without its decision yet.
        stalled: how many cycles in a row, up to the last, made no progress.
    """
    if not summaries:
        return None
    latest = summaries[-1]
    lines = failing_lines(latest)
    limit = policy.escalate_after_fixes
    counts = {line: failed_fixes(summaries, line) for line in lines}
    stuck = [line for line, n in counts.items() if limit is not None and n >= limit]
    if stuck:
        why = (f"fail fast: the fixes of {', '.join(stuck)} failed in "
               f"{plural(max(counts[s] for s in stuck), 'cycle')} in a row (escalation after "
               f"{limit})")
        return _pivot(tree, stuck, why)
    window = policy.escalate_after_stalled
    if window is None or stalled < window or _escalated_in(summaries, stalled):
        return None
    tested = [t.hypothesis for t in latest.tasks if t.hypothesis]
    why = (f"fail fast: no progress in the last {plural(stalled, 'cycle')} "
           f"({latest.cycle - stalled + 1} to {latest.cycle}; escalation after {window})")
    return _pivot(tree, [*dict.fromkeys([*lines, *tested])], why)


def _escalated_in(summaries: list[CycleSummary], stalled: int) -> bool:
    """Whether an escalation asked for one of the last ``stalled`` cycles."""
    return any(s.decision is not None and s.decision.escalated
               for s in summaries[-stalled - 1:-1])


def _pivot(tree: HypothesisTree, lines: list[str], why: str) -> CycleDecision:
    """A pivot abandoning ``lines`` for the first open hypothesis left (none: a new one)."""
    known = {h.id for h in tree.hypotheses}
    left = [h for h in tree.open() if h.id not in lines]
    pursue = left[0].id if left else None
    whither = (f"pursue {pursue}: {left[0].statement}" if left else
               "no open hypothesis is left: propose an alternative hypothesis or approach")
    reason = (f"{why}; abandon {', '.join(lines) or 'the approach of these cycles'} and "
              f"{whither}")
    return CycleDecision(action="pivot", escalated=True, pursue=pursue,
                         abandon=lines[:20], reason=clip(reason, COMMENT_CHARS),
                         hypotheses=[*[h for h in lines if h in known], *([pursue] if pursue
                                                                          else [])][:20])


def abandoned(tree: HypothesisTree, decision: CycleDecision, cycle: int) -> HypothesisTree:
    """``tree`` with the hypotheses an escalation abandons marked ``abandoned_in`` ``cycle``."""
    if not decision.escalated:
        return tree
    marked = [h.model_copy(update={"abandoned_in": cycle}) for h in tree.hypotheses
              if h.id in decision.abandon and h.abandoned_in is None]
    return tree.replaced(marked) if marked else tree
