"""A workflow that sets its kind and status first thing, then continues as new once.

Its first execution, started with its kind and status, sends no upsert for them; the second,
which carries them over from the first, sends them as any workflow continued as new always
did (``workflows.common.events``: a history of before the change replays unchanged).
"""

from __future__ import annotations

import asyncio

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.common.events import upsert_keywords
    from workflows.constants import KIND_KEY, STATUS_KEY


@workflow.defn(name="UpsertsContinuedProbe")
class ContinuedProbe:
    @workflow.run
    async def run(self, left: int) -> None:
        upsert_keywords(**{KIND_KEY.name: "study", STATUS_KEY.name: "running"})
        await asyncio.sleep(0)  # the upsert goes out once the workflow waits
        if left:
            workflow.continue_as_new(left - 1)
