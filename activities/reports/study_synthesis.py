"""The synthesis that opens an ended study's ``study.md``: what was found, how sure, what is open.

Deterministic, from the study's verified record only (no model writes it): every line cites
the cycle, the task and the verified metric it rests on, with the metric's interval where
the job reported one (``workflows.contracts.estimates``), or says that no verified metric
backs it. What was found: each hypothesis decided by its own test or concluded from its
children at the study's end (``workflows.study.conclusion``). How sure: each acceptance
criterion on the last cycle, and the key metric's best value. Still open: the hypotheses
left open or inconclusive, and the tasks that never completed. A running study has none.
Statements are shown whole: the synthesizer's as its schema bounds them, hypotheses' as
their contract does; only the reason the synthesizer gave no answer and a task's failure
are bounded, and a cut says how much it left out (``workflows.contracts.plaintext.clip``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from activities.reports.branches import md
from activities.reports.claims import flagged_line
from activities.reports.numbers import value
from activities.reports.tasks import quoted
from workflows.contracts.estimates import number, reading
from workflows.contracts.hypotheses import DECIDED, Evidence, Hypothesis
from workflows.contracts.plaintext import clip
from workflows.contracts.study import CycleSummary
from workflows.contracts.synthesis import StudySynthesis
from workflows.study.verdicts import acceptance

if TYPE_CHECKING:
    from activities.reports.study import StudyReport

REASON_CHARS = 600
"""The most of a note or a task's failure a line shows (a cut says how much it left out)."""
HOLDS = {"met": "holds", "unmet": "does not hold", "inconclusive": "is not established"}


def synthesis(report: StudyReport) -> list[str]:
    """The synthesis section of an ended study ([] while it runs or before any cycle).

    The study synthesizer's when it answered; else the deterministic one, saying why.
    """
    last = report.latest()
    if report.status == "running" or last is None:
        return []
    if report.synthesis is not None:
        return _written(report.synthesis)
    why = f" ({_whole(clip(report.synthesis_note, REASON_CHARS))})" if report.synthesis_note \
        else ""
    return ["", "## Synthesis", "",
            f"Deterministic, written from verified metrics only{why}. Each line cites its "
            "cycle, task and metric.",
            "", "What was found:", "", *(_found(report) or ["- No hypothesis was decided."]),
            "", "How sure:", "", *(_sure(report, last) or ["- No acceptance criterion or key "
                                                           "metric was set."]),
            "", "Still open:", "", *(_open(report) or ["- Nothing: every hypothesis is "
                                                       "decided and every task completed."])]


def _whole(text: str) -> str:
    """``text`` as literal Markdown on one line, whole (its contract bounds it)."""
    return md(text, len(text))


def _cites(evidence: list[Evidence]) -> str:
    if not evidence:
        return "no verified metric backs it"
    return "; ".join(f"cycle {e.cycle}, task {md(e.task_id)}: {md(e.shown())}"
                     for e in evidence)


def _said(h: Hypothesis) -> str:
    return f"{md(h.id)} ({_whole(h.statement)})"


def _found(report: StudyReport) -> list[str]:
    lines: list[str] = []
    for h in report.tree.hypotheses:
        if h.status not in DECIDED:
            continue
        how = (f"concluded at the study's end {_whole(h.concluded)}" if h.concluded else
               f"its test {md(h.test.describe())} decided in cycle {h.decided_in}")
        lines.append(f"- {_said(h)} is **{h.status}**: {how} ({_cites(h.evidence)}).")
    return lines


def _sure(report: StudyReport, last: CycleSummary) -> list[str]:
    lines: list[str] = []
    for test in report.policy.acceptance:
        status, _ = acceptance([test], last)
        values = [f"cycle {last.cycle}, task {md(t.task_id)}: "
                  f"{md(test.metric or '')} = {md(value(raw))}"
                  for t in last.tasks
                  if (raw := reading(t.metrics, test.metric or "")[0]) is not None
                  and test.task_id in (None, t.task_id)]
        cited = "; ".join(values) if values else f"no task of cycle {last.cycle} reported it"
        lines.append(f"- Acceptance criterion {md(test.describe())} {HOLDS[status]} "
                     f"({cited}).")
    key = report.policy.key_metric
    if key is not None:
        lines.append(_key_line(report.summaries, key.name, key.direction))
    return lines


def _key_line(summaries: list[CycleSummary], name: str, direction: str) -> str:
    known = [s for s in summaries if s.key_value is not None]
    if not known:
        return f"- Key metric {md(name)}: no cycle reported it."
    pick = min if direction == "minimize" else max
    best = pick(known, key=lambda s: s.key_value or 0.0)
    tasks = [f"task {md(t.task_id)}: {md(name)} = {md(value(t.metrics[name]))}"
             for t in best.tasks if name in t.metrics
             and number(t.metrics[name]) == best.key_value]
    cited = "; ".join(tasks) if tasks else \
        f"{md(name)} = {value(best.key_value)}; its task is in that cycle's report"
    return f"- Key metric {md(name)}: best in cycle {best.cycle} ({cited})."


def _open(report: StudyReport) -> list[str]:
    lines = [f"- {_said(h)} is {h.status}" + (f" ({_cites(h.evidence)})" if h.evidence else
                                              ": no task reported its test's metric") + "."
             for h in report.tree.hypotheses if h.status not in DECIDED]
    lines += [f"- Task {md(c.task_id)} of cycle {c.cycle} never completed ({c.status}"
              + (f": {_whole(clip(c.reason, REASON_CHARS))}" if c.reason else "") + ")."
              for c in report.carried]
    return lines


KINDS = (("found", "What was found:"), ("sure", "How sure:"), ("open", "Still open:"))


def _written(given: StudySynthesis) -> list[str]:
    """The study synthesizer's answer, each statement with its citations."""
    by = f" ({md(given.model)})" if given.model else ""
    lines = ["", "## Synthesis", "",
             f"Written by the study synthesizer{by} from the study's verified record; each "
             "statement cites its cycle, task and verified metric or artifact.", "",
             *quoted(given.conclusion)]
    if given.unheld:
        lines += ["", f"**{flagged_line(given.unheld)}**"]
    for kind, title in KINDS:
        said = [s for s in given.statements if s.kind == kind]
        if said:
            lines += ["", title, ""]
            lines += [f"- {_whole(s.text)} "
                      f"({'; '.join(_whole(c.shown()) for c in s.cites)})" for s in said]
    return lines
