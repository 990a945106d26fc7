"""Go / no-go after a cycle, by rules, in this fixed order (the first that applies decides).

1. **Acceptance** — the policy's acceptance criteria all hold on the cycle's verified
   metrics → ``stop`` ("acceptance criteria met: …"). A criterion on a metric with an
   interval holds only when the whole interval clears its threshold.
2. **Cycle limit** — ``max_cycles`` cycles have run → ``stop``.
3. **Budget** — the study has spent ``budget_usd`` or more → ``stop``.
   When acceptance is *inconclusive* (no criterion fails, but an interval includes a
   threshold), a stop by rules 2 to 5 says "acceptance not established" and why: it is
   never "met".
4. **Escalation** — the fixes of a line failed ``escalate_after_fixes`` times in a row, or
   ``escalate_after_stalled`` cycles made no progress (as rule 5 says it) with no escalation
   asked for them → ``pivot``, escalated: abandon the failing line and pursue another
   hypothesis or approach (``workflows.study.escalation``, fail fast).
5. **No progress** — none of the last ``no_progress_cycles`` cycles made progress → ``stop``.
   A cycle made progress when, against the cycles before it, a hypothesis was decided in it
   (a verdict ``settled`` it), or the key metric's best value improved (in its direction), or
   fewer tasks were left unfinished than in the cycle before. A key value better than the best
   but within their intervals (either value inside the other's interval) is a tie, not an
   improvement, and the stop's reason says so. The first cycle has nothing to
   compare with, so the rule needs ``no_progress_cycles + 1`` cycles.
6. **Fix** — a task linked to a hypothesis did not complete, or a hypothesis came out
   ``inconclusive`` → ``fix``: retry what failed, with its diagnosis. When no task of the cycle
   links to a hypothesis, every task counts (the whole plan is the question).
7. **Refuted** — a hypothesis was refuted → ``pivot`` to its first open sibling (tree order;
   roots are siblings of each other). With no open sibling: a child hypothesis → ``iterate`` on
   its parent (the next cycle proposes another alternative under it); a root → ``stop``, no
   alternative is left.
8. **Supported** — a hypothesis was supported → ``iterate``: on its first open child, else the
   tree's first open hypothesis, else the next question.
9. **Acceptance inconclusive** → ``iterate``: gather more evidence (another cycle), the
   reason naming the interval that includes the threshold (rules 6 to 8 say it too).
10. Otherwise → ``iterate``: nothing was decided and nothing failed.

Consecutive fixes that fail escalate at rule 4, and a pivot that changes nothing stops at
rule 5 (fail fast rather than retry forever).
"""

from __future__ import annotations

from workflows.contracts.base import COMMENT_CHARS
from workflows.contracts.estimates import within_intervals
from workflows.contracts.hypotheses import HypothesisTree, Verdict
from workflows.contracts.plaintext import clip
from workflows.contracts.study import Action, CycleDecision, CycleSummary, StudyPolicy
from workflows.contracts.words import plural
from workflows.study.escalation import escalation, failing_lines
from workflows.study.verdicts import acceptance, shown


def decide(policy: StudyPolicy, tree: HypothesisTree, summaries: list[CycleSummary],
           spent_usd: float) -> CycleDecision:
    """The rules' decision after the last of ``summaries`` (its verdicts applied to ``tree``).

    Raises:
        ValueError: no cycle has run.
    """
    if not summaries:
        raise ValueError("no cycle has run: nothing to decide on")
    latest = summaries[-1]
    met, why = acceptance(policy.acceptance, latest)
    if met == "met":
        return _stop(f"acceptance criteria met: {why}")
    unsettled = f"acceptance not established: {why}" if met == "inconclusive" else ""
    stop = _limits(policy, summaries, spent_usd)
    escalated = None if stop else escalation(policy, tree, summaries, stalled(policy, summaries))
    if escalated is not None:
        return _also(escalated, unsettled)
    stop = stop or _stalled(policy, summaries)
    if stop:
        return _stop(f"{stop}; {unsettled}" if unsettled else stop)
    decided = _fix(latest) or _refuted(tree, latest.verdicts) or _supported(tree, latest.verdicts)
    if decided is not None:
        return _also(decided, unsettled)
    if unsettled:
        return _decision(action="iterate",
                         reason=f"{unsettled}; gather more evidence (another cycle)")
    return _decision(action="iterate",
                     reason=f"cycle {latest.cycle}: no hypothesis decided and every task "
                            f"completed ({plural(latest.tasks_total, 'task')}): iterate")


def _also(decision: CycleDecision, unsettled: str) -> CycleDecision:
    """``decision`` with the inconclusive acceptance said too (nothing to say: as it is)."""
    if not unsettled:
        return decision
    return decision.model_copy(update={
        "reason": clip(f"{decision.reason}; {unsettled}", COMMENT_CHARS)})


def _limits(policy: StudyPolicy, summaries: list[CycleSummary], spent_usd: float) -> str:
    """Why the study stops by its cycle limit or budget (empty: it does not)."""
    if len(summaries) >= policy.max_cycles:
        return f"cycle limit reached: {len(summaries)} of {plural(policy.max_cycles, 'cycle')} run"
    if policy.budget_usd is not None and spent_usd >= policy.budget_usd:
        return f"budget spent: ${spent_usd:.2f} of ${policy.budget_usd:.2f}"
    return ""


def stalled(policy: StudyPolicy, summaries: list[CycleSummary]) -> int:
    """How many cycles in a row, up to the last, made no progress.

    The first cycle is never counted: it has nothing to compare with.
    """
    count = 0
    for index in range(len(summaries) - 1, 0, -1):
        if progress(summaries, index, policy):
            break
        count += 1
    return count


def progress(summaries: list[CycleSummary], index: int, policy: StudyPolicy) -> str:
    """What progress cycle ``summaries[index]`` made over the cycles before it (empty: none)."""
    current, before = summaries[index], summaries[:index]
    settled = [v.hypothesis for v in current.verdicts if v.settled]
    if settled:
        return f"hypothesis {', '.join(settled)} decided"
    if key_change(before, current, policy)[0]:
        return f"key metric improved to {key_shown(current)}"
    if before and current.unfinished < before[-1].unfinished:
        return f"unfinished tasks down from {before[-1].unfinished} to {current.unfinished}"
    return ""


def key_change(before: list[CycleSummary], current: CycleSummary,
               policy: StudyPolicy) -> tuple[bool, str]:
    """Whether ``current``'s key value improved on the best before it, and a tie said.

    A value better than the best in its direction is no improvement when the two differ within
    their intervals (:func:`~workflows.contracts.estimates.within_intervals`); the text then
    says so. Without a key value, or without a better one, nothing is said.
    """
    if current.key_value is None:
        return False, ""
    best = _best_cycle(before, policy)
    if best is None or best.key_value is None:
        return True, ""
    if not _better(current.key_value, best.key_value, policy):
        return False, ""
    if within_intervals(current.key_value, current.key_ci, best.key_value, best.key_ci):
        return False, (f"key metric {key_shown(current)} vs best {key_shown(best)}: within "
                       "intervals, not an improvement")
    return True, ""


def _stalled(policy: StudyPolicy, summaries: list[CycleSummary]) -> str:
    n = policy.no_progress_cycles
    if len(summaries) < n + 1:
        return ""
    window = range(len(summaries) - n, len(summaries))
    if any(progress(summaries, i, policy) for i in window):
        return ""
    cycles = [summaries[i] for i in window]
    best = _best([s.key_value for s in summaries], policy)
    ties = [said for i in window if (said := key_change(summaries[:i], summaries[i], policy)[1])]
    key = (f"key metric best {shown(best)} not improved "
           f"({', '.join(shown(s.key_value) for s in cycles)}{''.join(f'; {t}' for t in ties)})"
           if best is not None else "no key metric reported")
    unfinished = " → ".join(str(s.unfinished) for s in [summaries[window[0] - 1], *cycles])
    return (f"no progress in the last {plural(n, 'cycle')} ({cycles[0].cycle} to "
            f"{cycles[-1].cycle}): no hypothesis decided, {key}, unfinished tasks {unfinished}")


def _fix(latest: CycleSummary) -> CycleDecision | None:
    linked = [t for t in latest.tasks if t.hypothesis]
    failed = [t for t in (linked or latest.tasks) if t.status != "completed"]
    inconclusive = [v for v in latest.verdicts if v.status == "inconclusive"]
    if not failed and not inconclusive:
        return None
    said = [f"task {t.task_id} {t.status}: {t.diagnosis or t.reason or 'no diagnosis'}"
            for t in failed[:5]]
    if len(failed) > 5:
        said.append(f"and {len(failed) - 5} more tasks")
    said += [v.reason for v in inconclusive[:5]]
    concerned = [*dict.fromkeys([*(t.hypothesis for t in failed if t.hypothesis),
                                 *(v.hypothesis for v in inconclusive)])]
    counts = [f"{plural(len(failed), 'task')} unfinished" if failed else "",
              f"{plural(len(inconclusive), 'hypothesis', 'hypotheses')} inconclusive"
              if inconclusive else ""]
    return _decision(action="fix", hypotheses=concerned, fixes=failing_lines(latest),
                         reason=f"{', '.join(c for c in counts if c)} — {'; '.join(said)}")


def _refuted(tree: HypothesisTree, verdicts: list[Verdict]) -> CycleDecision | None:
    refuted = [v for v in verdicts if v.status == "refuted"]
    for verdict in refuted:
        alternatives = [h for h in tree.siblings(verdict.hypothesis) if h in tree.open()]
        if alternatives:
            target = alternatives[0]
            return _decision(action="pivot", pursue=target.id,
                                 hypotheses=[verdict.hypothesis, target.id],
                                 reason=f"{verdict.reason}; pivot to its sibling {target.id}: "
                                        f"{target.statement}")
    if not refuted:
        return None
    first = refuted[0]
    parent = tree.get(first.hypothesis).parent
    if parent is not None:
        return _decision(action="iterate", hypotheses=[first.hypothesis, parent],
                             reason=f"{first.reason}; {_no_open_sibling(tree, first)}: "
                                    f"iterate on its parent {parent} with another alternative")
    return _stop(f"{first.reason}; no open alternative hypothesis remains",
                 [first.hypothesis])


def _no_open_sibling(tree: HypothesisTree, refuted: Verdict) -> str:
    """Why a refuted hypothesis has no sibling to pivot to, naming each sibling's status."""
    siblings = tree.siblings(refuted.hypothesis)
    if not siblings:
        return f"{refuted.hypothesis} has no sibling"
    said = ", ".join(f"{h.id} {h.status}" + (f" in cycle {h.decided_in}" if h.decided_in
                                              else "") for h in siblings)
    return f"no sibling of {refuted.hypothesis} is still open ({clip(said, 300)})"


def _supported(tree: HypothesisTree, verdicts: list[Verdict]) -> CycleDecision | None:
    supported = [v for v in verdicts if v.status == "supported"]
    if not supported:
        return None
    first = supported[0]
    still_open = tree.open()
    children = [h for h in tree.children(first.hypothesis) if h in still_open]
    if children:
        nxt, where = children[0], "its child"
    elif still_open:
        nxt, where = still_open[0], "the next open hypothesis"
    else:
        return _decision(action="iterate", hypotheses=[first.hypothesis],
                             reason=f"{first.reason}; no open hypothesis left: iterate on the "
                                    "next question")
    return _decision(action="iterate", hypotheses=[first.hypothesis, nxt.id],
                         reason=f"{first.reason}; iterate on {where} {nxt.id}: "
                                f"{nxt.statement}")


def _stop(reason: str, hypotheses: list[str] | None = None) -> CycleDecision:
    return _decision(action="stop", reason=reason, hypotheses=hypotheses or [])


def _decision(*, action: Action, reason: str, hypotheses: list[str] | None = None,
              pursue: str | None = None, fixes: list[str] | None = None) -> CycleDecision:
    """A decision by the rules, its reason cut to what a decision may carry."""
    return CycleDecision(action=action, reason=clip(reason, COMMENT_CHARS),
                         hypotheses=(hypotheses or [])[:20], pursue=pursue,
                         fixes=(fixes or [])[:20])


def _best(values: list[float | None], policy: StudyPolicy) -> float | None:
    present = [v for v in values if v is not None]
    if not present:
        return None
    return min(present) if _minimize(policy) else max(present)


def _best_cycle(summaries: list[CycleSummary], policy: StudyPolicy) -> CycleSummary | None:
    """The earliest cycle with the best key value (none: no cycle reported one)."""
    best = _best([s.key_value for s in summaries], policy)
    return next((s for s in summaries if s.key_value == best), None) if best is not None \
        else None


def key_shown(summary: CycleSummary) -> str:
    """A cycle's key value with its interval: ``0.4905 [0.42, 0.55]``."""
    ci = summary.key_ci
    interval = f" [{shown(ci[0])}, {shown(ci[1])}]" if ci is not None else ""
    return f"{shown(summary.key_value)}{interval}"


def _better(value: float, than: float, policy: StudyPolicy) -> bool:
    return value < than if _minimize(policy) else value > than


def _minimize(policy: StudyPolicy) -> bool:
    return policy.key_metric is not None and policy.key_metric.direction == "minimize"
