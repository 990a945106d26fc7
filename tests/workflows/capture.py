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
from typing import Any

from temporalio.testing import WorkflowEnvironment

from tests.conftest import binary, register_search_attributes
from tests.workflows.harness import Harness, task
from workflows.client import DATA_CONVERTER
from workflows.constants import task_workflow_id

HISTORIES = Path(__file__).resolve().parent.parent / "histories"

UNSAFE = "import socket\nsocket.create_connection(('example.org', 80))\n"
SCENARIOS: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = {
    "diamond_completed": ([task("report", deps=["a", "b"]), task("a", priority="LOW"),
                           task("b", priority="HIGH")], {}),
    "failure_blocks": ([task("a", behave="crash"), task("b", deps=["a"]), task("d"),
                        task("e", behave="no_artifact"), task("f", job=False)], {}),
    "retries": ([task("oom", behave="oom_above:32", batch_size=64),
                 task("moved", behave="misplaced"), task("unsafe", code=UNSAFE)], {}),
    "gates": ([task("a")], {"gates": {"plan": {"human": True, "timeout_s": 3600,
                                               "on_timeout": "approve"},
                                      "result": {"human": True, "timeout_s": 3600,
                                                 "on_timeout": "approve"}}}),
}


async def capture() -> None:
    """Run every scenario and save the run's and its tasks' histories."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=binary("temporal-test-server"), data_converter=DATA_CONVERTER)
    await register_search_attributes(env.client)
    try:
        for name, (decisions, policy) in SCENARIOS.items():
            with tempfile.TemporaryDirectory() as tmp:
                harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", Path(tmp))
                result = await harness.run(decisions, **policy)
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
