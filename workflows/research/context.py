"""Context carried forward within a run: digests of finished tasks for the agents after them.

:func:`task_digest` cuts one task's result to what an agent needs (``TaskDigest``); the
coder of a dependent task gets one per dependency (:func:`upstream`), the output processor
one per task (``workflows.research.report``). Both are bounded: at most
``DIGEST_ITEMS`` metrics, checks and artifacts each (the metrics the task's checks, the
plan's key metric and the hypotheses' tests name kept first; ``omitted`` says what was left
out), metric values of at most
``DIGEST_VALUE_CHARS``, and output tails that share a fixed budget, so a task with many
dependencies still starts with a small input. Across a study's cycles, a task reads an
earlier cycle's verified artifacts by reference (:func:`unreusable` checks the study
resolved them). Deterministic, pure code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workflows.common.canonical import canonical_json
from workflows.common.cuts import keep, keep_mapping
from workflows.contracts.context import DIGEST_ITEMS, DIGEST_VALUE_CHARS, TaskDigest
from workflows.contracts.estimates import split_name
from workflows.contracts.execution import DependencyArtifact
from workflows.contracts.hypotheses import HypothesisTree
from workflows.contracts.plan import Decision, Plan
from workflows.contracts.results import ResearchInput, TaskResult
from workflows.contracts.study import StudyContext

UPSTREAM_TASKS = 50
"""Dependencies a coder gets a digest of (the rest: their artifact names only)."""
UPSTREAM_TAIL, UPSTREAM_TAIL_MIN, UPSTREAM_BUDGET = 1000, 200, 20_000
"""Output tail per dependency: 1 000 characters, less when many share the 20 000."""


def task_digest(result: TaskResult, *, tail: int,
                wanted: frozenset[str] = frozenset()) -> TaskDigest:
    """``result`` as an agent sees it, its job's output cut to the last ``tail`` characters.

    The metrics its checks and ``wanted`` name (:func:`wanted_metrics`) are kept first, and
    its failed checks; ``omitted`` says what each cut list left out.
    """
    named = wanted | {c.check.metric for c in result.checks}
    first = named | {split_name(n, result.metrics)[0] for n in named}
    metrics, metrics_cut = keep_mapping(result.metrics, DIGEST_ITEMS, what="metric",
                                        first=first)
    failed = [c for c in result.checks if not c.passed]
    checks, checks_cut = keep(result.checks, DIGEST_ITEMS, what="check",
                              first={c.check.describe() for c in failed},
                              name=lambda c: c.check.describe())
    artifacts, artifacts_cut = keep(result.artifacts, DIGEST_ITEMS, what="artifact",
                                    name=lambda a: a.name)
    return TaskDigest(
        task_id=result.task_id, action=result.action, status=result.status,
        status_reason=result.status_reason,
        metrics={k: _value(v) for k, v in metrics.items()},
        checks=[f"{c.check.describe()}: {'pass' if c.passed else 'fail'}" for c in checks],
        artifacts=[a.name for a in artifacts],
        stdout_tail=result.execution.stdout_tail[-tail:] if result.execution and tail else "",
        files=[DependencyArtifact(task_id=result.task_id, name=a.name, path=a.path,
                                  sha256=a.sha256) for a in artifacts],
        omitted=[cut for cut in (metrics_cut, checks_cut, artifacts_cut) if cut])


def wanted_metrics(plan: Plan | None, study: StudyContext | None) -> frozenset[str]:
    """The metrics a digest keeps before others: the key metric, the hypotheses' tests'."""
    tests = [h.test for h in [*(plan.hypotheses if plan else []),
                              *(study.tree.hypotheses if study else [])]]
    keys = [m.name for m in (plan.metric if plan else None,
                             *(d.metric for d in (plan.decisions if plan else []))) if m]
    return frozenset([*keys, *(t.metric for t in tests if t.metric)])


def study_facts(study: StudyContext | None, plan: Plan | None,
                ) -> tuple[StudyContext | None, list[str]]:
    """What a study's cycle's answer is judged by, and the ids of the hypotheses it tests.

    ``study`` without its earlier cycles, carried tasks and calibration (the planner's, not
    the answer's), its tree with ``plan``'s new proposals joined (a test referring to a plan
    check still reads as that reference: the study resolves it); the tested ids are those the
    plan proposes or a task links to, in the tree's order. A run of its own has neither.
    """
    if study is None:
        return None, []
    known = {h.id for h in study.tree.hypotheses}
    added = [h for h in plan.hypotheses if h.id not in known] if plan else []
    try:  # a proposal of a known id is the tree's record (the study checks they agree)
        tree = HypothesisTree(hypotheses=[*study.tree.hypotheses, *added])
    except ValueError:  # the study reports what is wrong when it closes the cycle
        tree = study.tree
    linked = {*(h.id for h in plan.hypotheses),
              *(d.hypothesis for d in plan.decisions if d.hypothesis)} if plan else set[str]()
    facts = study.model_copy(update={"previous": [], "carried": [], "calibration": {},
                                     "tree": tree})
    return facts, [h.id for h in tree.hypotheses if h.id in linked]


def upstream(decision: Decision, results: Mapping[str, TaskResult],
             wanted: frozenset[str] = frozenset()) -> list[TaskDigest]:
    """A digest of each finished task ``decision`` depends on, in its dependencies' order.

    Past :data:`UPSTREAM_TASKS`, the last digest says which dependencies were left out
    (the coder still gets their artifacts' names).
    """
    finished = [results[d] for d in decision.dependencies if d in results]
    done, cut = keep(finished, UPSTREAM_TASKS, what="dependency digest",
                     name=lambda r: r.task_id)
    if not done:
        return []
    tail = max(UPSTREAM_TAIL_MIN, min(UPSTREAM_TAIL, UPSTREAM_BUDGET // len(done)))
    digests = [task_digest(r, tail=tail, wanted=wanted) for r in done]
    if cut:
        last = digests[-1]
        digests[-1] = last.model_copy(update={"omitted": [*last.omitted, cut]})
    return digests


def _value(value: Any) -> Any:
    """A metric value as it is, or its first characters as text when it is long."""
    text = canonical_json(value)
    return value if len(text) <= DIGEST_VALUE_CHARS else text[:DIGEST_VALUE_CHARS] + "…"


def unreusable(plan: Plan, req: ResearchInput) -> str:
    """Why ``plan``'s reuse of earlier cycles' tasks cannot be met in this run ("" if it can).

    Only a study's cycle reuses (``Decision.reuse``), and each reference must have been
    resolved by the study into that task's verified artifacts (``ResearchInput.earlier``).
    """
    wanted = sorted({ref for d in plan.decisions for ref in d.reuse})
    if not wanted:
        return ""
    if req.study is None:
        return (f"tasks reuse earlier cycles' tasks ({', '.join(wanted)}), which only a "
                "study's cycle can: run the plan with `assay study`")
    resolved = {a.task_id for a in req.earlier}
    missing = [ref for ref in wanted if ref not in resolved]
    return (f"the study resolved no verified artifacts for {', '.join(missing)}"
            if missing else "")
