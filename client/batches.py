"""A large run's progress read from its batches' results, not by replaying the run.

A completed run's result lists each task's status, unless it passed its size limit, as a
run of several thousand tasks does: the ``progress`` query must then answer, and a query of
an ended run replays its whole history on a worker (seconds for 10 000 tasks). A run of
over 1 000 tasks ran them in batches, each a child workflow whose result holds its tasks'
results: their statuses are read from those, a fetch per batch and no validation.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import Client
from temporalio.service import RPCError

from workflows.constants import batch_workflow_id
from workflows.contracts.batches import BatchResult
from workflows.contracts.results import ResearchResult, RunProgress


async def batched_progress(client: Client, result: ResearchResult,
                           phase: str | None) -> RunProgress | None:
    """The progress of a completed run that ran in batches (None: it ran in none)."""
    tasks: dict[str, str] = {}
    number = 1
    while True:
        try:
            batch = await client.get_workflow_handle(
                batch_workflow_id(result.run_id, number), result_type=BatchResult).result()
        except RPCError:  # no such batch: the batches have all been read
            break
        raw: list[dict[str, Any]] = batch.raw()
        tasks.update({str(t["task_id"]): str(t["status"]) for t in raw})
        number += 1
    if not tasks or len(tasks) != sum(result.task_counts.values()):
        return None  # no batches, or tasks no batch ran (a cancel): the query answers
    return RunProgress.model_validate({
        "run_id": result.run_id, "phase": phase or "done", "status": result.status,
        "tasks": tasks, "order": list(tasks),
        "decided": [g for g in result.gates if g.status != "waiting"],
        "refused": [line for g in result.gates for line in g.refused]})
