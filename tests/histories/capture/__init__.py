"""The scenarios whose histories are saved for the replay test, and how they are captured.

``python -m tests.histories.capture`` (``make histories``) runs every scenario on a fresh
time-skipping server and writes each workflow's history to ``tests/histories``; each module's
own ``python -m tests.histories.capture.<module>`` re-captures only its scenarios (``reset``
alone needs a dev server). The scenarios' fakes are also used by the workflow tests.
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from temporalio.testing import WorkflowEnvironment


async def alone(scenario: Callable[[WorkflowEnvironment, Path], Awaitable[None]]) -> None:
    """Run one capture scenario alone: a fresh time-skipping server and a temporary folder."""
    from client.assay import DATA_CONVERTER
    from tests.conftest import binary, register_search_attributes

    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=binary("temporal-test-server"), data_converter=DATA_CONVERTER)
    await register_search_attributes(env.client)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            await scenario(env, Path(tmp))
    finally:
        await env.shutdown()
