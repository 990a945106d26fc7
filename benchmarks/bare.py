"""The baseline: a bare Temporal workflow with one activity, nothing of Assay's."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow


@activity.defn(name="bare_echo")
async def bare_echo(text: str) -> str:
    """Return the input; the cheapest possible activity."""
    return text


@workflow.defn(name="BareWorkflow")
class BareWorkflow:
    """One activity round trip."""

    @workflow.run
    async def run(self, text: str) -> str:
        """Call the activity once."""
        return await workflow.execute_activity(bare_echo, text,
                                               start_to_close_timeout=timedelta(seconds=30))
