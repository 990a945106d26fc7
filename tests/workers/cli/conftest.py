"""Fixtures of the CLI tests: the pools served in-process for ``assay`` subprocesses."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.support.e2e import isolated_settings, queue_env, worker_env
from workers.pools.builders import SERVED_POOLS, run_pools


@pytest.fixture
async def served(dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
                 task_queue: str) -> AsyncIterator[dict[str, str]]:
    """Workers in this process; returns the environment a CLI process needs to reach them."""
    settings = isolated_settings(tmp_path / "assay", task_queue)
    stop = asyncio.Event()
    running = asyncio.create_task(run_pools(settings, list(SERVED_POOLS),
                                            database_url=fresh_database_url, stop=stop,
                                            client=dev_env.client))
    yield worker_env(dev_env.client.service_client.config.target_host, fresh_database_url,
                     settings.data_dir, **queue_env(settings))
    stop.set()
    await running
