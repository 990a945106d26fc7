"""The fixed parts of a study's section: what the study stops on, and how to plan or review.

The planner and the plan reviewer of a study's cycle read the same section
(:mod:`activities.agents.studies`); these parts are never cut. The output processor of a
study's cycle reads the study's rules, the hypotheses the cycle tests and how to answer in a
study (:func:`answer_section`), from the same parts. They say which cycle this is
of how many (so the last one can be planned to conclude), the acceptance criteria and the key
metric by their exact names (a task that reports ``cv_r2_mean`` for ``cv_r2`` does not meet
them), the budget, and what each reader is to do. A hypothesis's test is told apart from a
task's checks: a task REPORTS its hypothesis's metric, and its checks are for its own
correctness, so a refuted hypothesis is a finding, never a failed task.
"""

from __future__ import annotations

from typing import Literal

from activities.agents.prompting import bullets, fenced
from workflows.common.cuts import keep
from workflows.contracts.hypotheses import Hypothesis
from workflows.contracts.kpis import ESTIMATION_TARGET
from workflows.contracts.plaintext import clip
from workflows.contracts.resources import MAX_KINDS
from workflows.contracts.study import StudyContext, TaskOutcome
from workflows.contracts.words import plural

Reader = Literal["planner", "plan_reviewer", "output_processor"]
STATEMENT_CHARS = 400
"""A hypothesis statement is shown up to this many characters."""
TESTED_SHOWN = 20
"""Hypotheses under test the output processor is shown (the rest are named as left out)."""
ACTION_CHARS = 200
"""A reusable task's action is shown up to this many characters."""
FILES_SHOWN = 5
"""A reusable task's artifacts shown with their first lines (the rest by name)."""

TESTS_AND_CHECKS = (
    "A hypothesis's `test` and a task's `checks` are different things. The test is judged "
    "by the study on the metric a linked task REPORTS in metrics.json: have each linked task "
    "write that metric under the test's exact name (with its interval where the analysis has "
    "one), and never make the test's threshold a check (not `cv_r2 >= 0.5` as a check for a "
    "test `cv_r2 >= 0.5`): a refuted hypothesis is a finding, not a failed task. Checks are "
    "for the task's own correctness (rows read, folds run, no missing values left, a p-value "
    "between 0 and 1). Verdicts are computed from verified metrics, never from words; a test "
    "is judged on the interval when there is one, and one whose interval includes the "
    "threshold is inconclusive: settle it with more evidence (more data, more resamples or "
    "folds, a paired comparison), not by running the same job again.")
PLAN = (
    "Propose the hypotheses this cycle tests in `hypotheses`: an id, the `parent` it refines "
    "(or shares with its siblings), a `statement`, and the `test` that decides it (a metric "
    "a task reports, an operator and a threshold; `task_id` when one task alone decides). "
    "Set each task's `hypothesis` to the one its verified metrics are evidence for. A "
    "hypothesis already in the tree is not proposed again: a task links to it by its id "
    "alone (its `hypothesis`), and a new one may name it as `parent`; a changed hypothesis "
    "needs a new id. "
    + TESTS_AND_CHECKS + " Retry a carried task only with a change that answers its "
    "diagnosis. Do not run an earlier completed task again to use what it wrote: list it in "
    "the reading task's `reuse` (`c1.data` is task data of cycle 1, one of those offered "
    "above), and that task's job reads its verified files at `deps/c1.data/<file>` (the "
    "files listed above); a reused task is not a `dependencies` entry and is not planned "
    "again.")
ANSWER = (
    "Answer the goal from this cycle's verified results. For each hypothesis above, give the "
    "verified value of the metric its test names (with its interval where the task wrote "
    "one) and the task that reported it, and say whether it meets the test; a value whose "
    "interval includes the threshold does not settle it. The study itself judges each test "
    "and each acceptance criterion on these verified metrics by their exact names, never on "
    "your words: where no task reported a test's metric under that name, say so rather than "
    "offering another metric in its place. Say where the key metric stands against the "
    "acceptance criteria.")
REVIEW = (
    "Review the draft as this cycle of the study: does it carry out the decision (or, in "
    "the first cycle, start on the goal), answer the carried tasks' diagnoses, test "
    "hypotheses whose metrics can meet the acceptance criteria and key metric by their exact "
    "names, and plan a concluding cycle when this is the last? `reuse` may name only the "
    "earlier tasks offered above, and a job reads their files at `deps/<ref>/<file>`. "
    + TESTS_AND_CHECKS)


def rough(seconds: float) -> str:
    """A duration as a planner needs it: ``under 1 min``, ``5 min``, ``2.5 h``.

    Coarse on purpose: the same study re-run gives the same prompt bytes (a recording
    answers it), which seconds measured on a busy machine would not.
    """
    if seconds < 60:
        return "under 1 min"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def calibration_text(ctx: StudyContext) -> str:
    """Each task kind's time-estimate calibration: the factor to apply and the accuracy."""
    lines: list[str] = []
    for kind, c in list(ctx.calibration.items())[:MAX_KINDS]:
        said = f"{c.accuracy:.0%}" if c.accuracy is not None else "unknown"
        target = "" if c.accuracy is None else " (target met)" if \
            c.accuracy >= ESTIMATION_TARGET else " (below target)"
        after = (f", calibrated estimates {c.calibrated_accuracy:.0%}"
                 if c.calibrated_accuracy is not None else "")
        lines.append(f"- {kind}: actual = estimate times {c.factor:.2f} "
                     f"(from {plural(c.tasks, 'task')}); "
                     f"accuracy of the plan's estimates {said}{target}{after}; a 1 h estimate "
                     f"is {rough(3600 * c.factor)}")
    return (f"### Time estimates, calibrated from actuals (accuracy target ≥ "
            f"{ESTIMATION_TARGET:.0%})\n\nMultiply your time estimates of each kind by its "
            "factor:\n\n" + "\n".join(lines))


def policy_text(ctx: StudyContext, reader: Reader = "planner") -> str:
    """Which cycle of how many, the acceptance criteria, the key metric and the budget."""
    policy = ctx.policy
    left = policy.max_cycles - ctx.cycle
    if left <= 0 and reader == "output_processor":
        when = ("It is the study's last cycle: no later cycle will settle what this one "
                "leaves open, so say plainly what is still open.")
    elif left <= 0:
        when = ("It is the study's last cycle: plan it to conclude (settle what is still "
                "open, report the key metric with its interval, answer the goal).")
    else:
        when = f"After it, at most {left} more cycle{'s' if left != 1 else ''} may run."
    lines = [f"This is cycle {ctx.cycle} of at most {policy.max_cycles}. {when}"]
    if policy.acceptance:
        tests = "; ".join(f"`{t.describe()}`" for t in policy.acceptance)
        lines.append(f"The study stops when all its acceptance criteria hold: {tests} (on a "
                     "verified metric of exactly that name).")
    if policy.key_metric is not None:
        key = policy.key_metric
        better = "higher" if key.direction == "maximize" else "lower"
        lines.append(f"Key metric: `{key.name}` ({better} is better); progress is measured "
                     "on a task's verified metric of exactly that name, and a study that "
                     f"makes none for {plural(policy.no_progress_cycles, 'cycle')} stops.")
    if policy.budget_usd is not None:
        lines.append(f"Budget: ${policy.budget_usd:.2f}, of which ${ctx.spent_usd:.4f} is "
                     "spent.")
    return " ".join(lines)


def how_text(ctx: StudyContext, reader: Reader) -> str:
    """What the planner or the plan reviewer is to do with the section."""
    if reader == "plan_reviewer":
        return REVIEW
    if reader == "output_processor":
        return ANSWER
    start = ("Plan this cycle to carry out the decision above, using what the earlier "
             "cycles found. " if ctx.decision is not None else
             "Plan the study's first cycle: test the hypotheses that answer the goal. ")
    return start + PLAN


def reuse_text(ref: str, task: TaskOutcome, files: list[tuple[str, str | None]] | None) -> str:
    """A reusable task: its action, and its verified files with their first lines."""
    text = f"{ref}: {clip(task.action, ACTION_CHARS)}" if task.action else ref
    if files is None:
        return text
    if not files:
        return text + "; it verified no files"
    names = ", ".join(f"`deps/{ref}/{name}`" for name, _ in files)
    shown = [f"First lines of {name}:\n{fenced(first)}"
             for name, first in files[:FILES_SHOWN] if first]
    return "\n".join([f"{text}; files: {names}", *shown])


def hypothesis_text(h: Hypothesis) -> str:
    """One hypothesis: its id, parent, status, statement, test and evidence."""
    where = f"parent {h.parent}" if h.parent else "root"
    status = f"{h.status} in cycle {h.decided_in}" if h.decided_in else h.status
    if h.abandoned_in:
        status += f", abandoned in cycle {h.abandoned_in}: do not pursue"
    statement = clip(h.statement, STATEMENT_CHARS).rstrip(".")
    text = f"{h.id} ({where}) [{status}]: {statement}; test: {h.test.describe()}"
    if h.evidence:
        text += "; evidence: " + ", ".join(f"{e.task_id}.{e.shown()} "
                                           f"(cycle {e.cycle})" for e in h.evidence)
    return text


def answer_section(ctx: StudyContext, testing: list[str]) -> str:
    """The output processor's study section: the rules, the hypotheses tested, how to answer.

    At most :data:`TESTED_SHOWN` hypotheses are shown; a line names those left out.
    """
    tested = [h for h in ctx.tree.hypotheses if h.id in testing]
    shown, cut = keep(tested, TESTED_SHOWN, what="hypothesis", many="hypotheses",
                      name=lambda h: h.id)
    listed = bullets(hypothesis_text(h) for h in shown) or (
        "(none: no task of this cycle is linked to a hypothesis)")
    return "\n\n".join([
        "This run is a cycle of a study. " + policy_text(ctx, "output_processor"),
        "### Hypotheses this cycle tests\n\n" + listed + (f"\n{cut}" if cut else ""),
        "### How to answer in this study\n\n" + how_text(ctx, "output_processor")])
