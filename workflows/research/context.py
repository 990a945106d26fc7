"""Context carried forward within a run: digests of finished tasks for the agents after them.

:func:`task_digest` cuts one task's result to what an agent needs (``TaskDigest``); the
coder of a dependent task gets one per dependency (:func:`upstream`), the output processor
one per task (``workflows.research.report``). Both are bounded: at most
``DIGEST_ITEMS`` metrics, checks and artifacts each, metric values of at most
``DIGEST_VALUE_CHARS``, and output tails that share a fixed budget, so a task with many
dependencies still starts with a small input. Across a study's cycles, a task reads an
earlier cycle's verified artifacts by reference (:func:`unreusable` checks the study
resolved them). Deterministic, pure code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workflows.agents.context import DIGEST_ITEMS, DIGEST_VALUE_CHARS, TaskDigest
from workflows.common.canonical import canonical_json
from workflows.contracts.execution import DependencyArtifact
from workflows.contracts.plan import Decision, Plan
from workflows.contracts.results import ResearchInput, TaskResult

UPSTREAM_TASKS = 50
"""Dependencies a coder gets a digest of (the rest: their artifact names only)."""
UPSTREAM_TAIL, UPSTREAM_TAIL_MIN, UPSTREAM_BUDGET = 1000, 200, 20_000
"""Output tail per dependency: 1 000 characters, less when many share the 20 000."""


def task_digest(result: TaskResult, *, tail: int) -> TaskDigest:
    """``result`` as an agent sees it, its job's output cut to the last ``tail`` characters."""
    return TaskDigest(
        task_id=result.task_id, action=result.action, status=result.status,
        status_reason=result.status_reason,
        metrics={k: _value(v) for k, v in list(result.metrics.items())[:DIGEST_ITEMS]},
        checks=[f"{c.check.describe()}: {'pass' if c.passed else 'fail'}"
                for c in result.checks[:DIGEST_ITEMS]],
        artifacts=[a.name for a in result.artifacts[:DIGEST_ITEMS]],
        stdout_tail=result.execution.stdout_tail[-tail:] if result.execution and tail else "",
        files=[DependencyArtifact(task_id=result.task_id, name=a.name, path=a.path,
                                  sha256=a.sha256) for a in result.artifacts[:DIGEST_ITEMS]])


def upstream(decision: Decision, results: Mapping[str, TaskResult]) -> list[TaskDigest]:
    """A digest of each finished task ``decision`` depends on, in its dependencies' order."""
    done = [results[d] for d in decision.dependencies if d in results][:UPSTREAM_TASKS]
    if not done:
        return []
    tail = max(UPSTREAM_TAIL_MIN, min(UPSTREAM_TAIL, UPSTREAM_BUDGET // len(done)))
    return [task_digest(r, tail=tail) for r in done]


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
