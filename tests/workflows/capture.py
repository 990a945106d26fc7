"""Capture workflow histories for the replay tests.

Run ``python -m tests.workflows.capture`` after an intentional change to workflow code (and
say in the commit why old histories no longer replay, or keep both workflow versions with
``workflow.patched``). The scenarios reuse the fake-activity runs of ``test_research``.
"""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.conftest import binary, register_search_attributes
from tests.workflows.harness import task
from tests.workflows.test_research import run_plan
from workflows.client import DATA_CONVERTER
from workflows.constants import task_workflow_id

HISTORIES = Path(__file__).resolve().parent.parent / "histories"

SCENARIOS = {
    "diamond_completed": [task("report", deps=["a", "b"]), task("a", priority="LOW"),
                          task("b", priority="HIGH")],
    "failure_blocks": [task("a", behave="crash"), task("b", deps=["a"]), task("d"),
                       task("e", behave="no_artifact"), task("f", job=False)],
}


async def capture() -> None:
    """Run every scenario and save the run's and its tasks' histories."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=binary("temporal-test-server"), data_converter=DATA_CONVERTER)
    await register_search_attributes(env.client)
    try:
        for name, decisions in SCENARIOS.items():
            with tempfile.TemporaryDirectory() as tmp:
                result, _, _, _ = await run_plan(env, f"capture-{uuid.uuid4().hex[:8]}",
                                                 Path(tmp), decisions)
            ids = [("research", result.run_id), *(
                (f"task-{t.task_id}", task_workflow_id(result.run_id, t.task_id))
                for t in result.tasks if t.status != "blocked")]
            for kind, wf_id in ids:
                history = await env.client.get_workflow_handle(wf_id).fetch_history()
                out = HISTORIES / f"{name}.{kind}.json"
                out.write_text(history.to_json())
                print(f"wrote {out}")
    finally:
        await env.shutdown()


if __name__ == "__main__":
    asyncio.run(capture())
