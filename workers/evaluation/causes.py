"""Why a run failed its task, in one of six causes, read from its sample and its results.

``budget``: the run ran out of model budget or of the evaluation's time. ``planning``: no plan
ran (deferred, rejected, no task). ``environment``: the sandbox or a service failed the job
(a missing package or file, a sandbox violation, memory, a run that errored). ``code``: a job
failed on its own (non-zero exit, a timeout, rejected by review). ``verification``: a task's
checks failed, or every task completed yet the answer is not the reference. ``answer format``:
the answer had no readable formatted field. The first that applies, in the order listed.
"""

from __future__ import annotations

from typing import Any, cast

from workers.evaluation.labels import FORMAT_CAUSE

CAUSES = ("planning", "code", "environment", "verification", "answer format", "budget")
ENVIRONMENT_WORDS = ("modulenotfounderror", "importerror", "no such file", "environment",
                     "unreachable", "sandbox")
ENVIRONMENT_OUTCOMES = ("sandbox_violation", "out_of_memory", "killed")


def failure_cause(*, passed: bool, error: str, missed: list[str], document: Any) -> str:
    """The cause of a failed sample ("" when it passed)."""
    if passed:
        return ""
    run = cast(dict[str, Any], document) if isinstance(document, dict) else {}
    tasks = [cast(dict[str, Any], t) for t in cast(list[Any], run.get("tasks") or [])
             if isinstance(t, dict)]
    reasons = " ".join([error, str(run.get("status_reason") or ""),
                        *(str(t.get("status_reason") or "") for t in tasks)]).lower()
    if "budget" in reasons or "no result within" in error:
        return "budget"
    if error:
        return "environment"
    if run.get("status") in ("deferred", "rejected") or not tasks:
        return "planning"
    failed = [t for t in tasks if t.get("status") != "completed"]
    if failed:
        return _task_cause(failed[-1])
    if any(m.startswith(FORMAT_CAUSE) for m in missed):
        return "answer format"
    return "verification"


def _task_cause(task: dict[str, Any]) -> str:
    """One task's cause: its sandbox, its job's failure (or review), else its checks."""
    execution = cast(dict[str, Any], task.get("execution") or {})
    outcome = str(execution.get("outcome") or "")
    said = " ".join(str(execution.get(k) or "") for k in ("reason", "stderr_tail")).lower()
    if outcome in ENVIRONMENT_OUTCOMES or any(w in said for w in ENVIRONMENT_WORDS):
        return "environment"
    return "verification" if outcome == "succeeded" else "code"
