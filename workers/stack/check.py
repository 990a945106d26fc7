"""``assay check``: the health of every part of the stack, one line each.

It only looks: it starts nothing, so it is safe in a container health check and while a
stack is starting. Each item says what is wrong and what to do about it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from workers.pools.builders import SERVED_POOLS
from workers.settings import Settings
from workers.stack.embedded import EmbeddedPostgres, QdrantInUseError, QdrantLocal
from workers.stack.process import StackError
from workers.stack.state import running_stack
from workers.stack.temporal import connect, missing_search_attributes
from workflows.constants import Pool

POLLER_FRESH_S = 90.0
"""A poller seen longer ago than this (a long poll lasts ~60 s) is a worker that is gone."""


@dataclass(frozen=True)
class HealthItem:
    """One line of ``assay check``."""

    name: str
    ok: bool
    detail: str


def check(settings: Settings) -> list[HealthItem]:
    """Check every part of the stack (see :func:`acheck`)."""
    return asyncio.run(acheck(settings))


async def acheck(settings: Settings) -> list[HealthItem]:
    """Temporal, its search attributes, PostgreSQL, Qdrant, each pool's pollers, the sandbox."""
    items = await _temporal_items(settings)
    items.append(await postgres_item(settings))
    items.append(await asyncio.to_thread(qdrant_item, settings))
    items.append(await asyncio.to_thread(sandbox_item, settings))
    return items


async def _temporal_items(settings: Settings) -> list[HealthItem]:
    address, namespace = settings.temporal_address, settings.temporal_namespace
    try:
        client = await connect(address, namespace, timeout=3.0)
    except StackError as err:
        down = f"Temporal is not reachable at {address}"
        return [HealthItem("temporal", False, f"{err}; start it with `assay up`"),
                HealthItem("search attributes", False, down),
                *(HealthItem(f"queue {settings.queue(p)}", False, down) for p in Pool)]
    items = [HealthItem("temporal", True, f"{address}, namespace {namespace}")]
    try:
        missing = await missing_search_attributes(client)
    except StackError as err:
        items.append(HealthItem("search attributes", False, str(err)))
    else:
        items.append(HealthItem(
            "search attributes", not missing,
            f"missing {', '.join(sorted(missing))}: run `assay up` to register them"
            if missing else "all registered"))
    for pool in Pool:
        if pool in SERVED_POOLS:
            items.append(await _pollers_item(client, settings.queue(pool), pool))
        else:
            items.append(HealthItem(f"queue {settings.queue(pool)}", True,
                                    "no activities in this version; no worker needed"))
    return items


async def _pollers_item(client: Client, queue: str, pool: Pool) -> HealthItem:
    """Whether live workers poll ``queue`` (workflow pollers too where workflows run)."""
    kinds = {"activity": TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY}
    if pool in (Pool.ORCHESTRATION, Pool.SKILLS):
        kinds = {"workflow": TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, **kinds}
    counts: dict[str, int] = {}
    for label, kind in kinds.items():
        resp = await client.workflow_service.describe_task_queue(DescribeTaskQueueRequest(
            namespace=client.namespace, task_queue=TaskQueue(name=queue), task_queue_type=kind))
        now = time.time()
        counts[label] = sum(1 for p in resp.pollers
                            if now - p.last_access_time.ToDatetime().timestamp() < POLLER_FRESH_S)
    detail = ", ".join(f"{n} {label} poller{'s' * (n != 1)}" for label, n in counts.items())
    ok = all(counts.values())
    if not ok:
        detail += f": no worker serves it; run `assay up` or `assay worker --pool {pool.value}`"
    return HealthItem(f"queue {queue}", ok, detail)


async def postgres_item(settings: Settings) -> HealthItem:
    """Whether the configured database, else embedded PostgreSQL, answers ``select 1``."""
    if settings.database_url is not None:
        url = settings.database_url.get_secret_value()
        where = make_url(url).render_as_string(hide_password=True)
    else:
        embedded = EmbeddedPostgres(settings.postgres_dir)
        if not embedded.healthy():
            return HealthItem("postgresql", False, f"embedded PostgreSQL is not running in "
                              f"{embedded.pgdata}; start it with `assay up`")
        url, where = embedded.url(), f"embedded, pid {embedded.pid}"
    engine = create_async_engine(url, poolclass=NullPool)
    try:
        async with asyncio.timeout(5.0), engine.connect() as conn:
            await conn.execute(text("select 1"))
    except Exception as err:  # any failure to connect or query is the finding itself
        return HealthItem("postgresql", False, f"{where}: {err}")
    finally:
        await engine.dispose()
    return HealthItem("postgresql", True, where)


def qdrant_item(settings: Settings) -> HealthItem:
    """Whether Qdrant opens, or is held by the running stack (local mode admits one process)."""
    qdrant = QdrantLocal(settings.qdrant_dir, url=settings.qdrant_url)
    try:
        count = len(qdrant.open().get_collections().collections)
    except QdrantInUseError as err:
        stack = running_stack(settings)
        if stack is not None and err.pid == stack.pid:
            return HealthItem("qdrant", True, f"{qdrant.where}, held by the stack (pid {err.pid})")
        return HealthItem("qdrant", False, str(err))
    except Exception as err:  # unreachable server, corrupt storage: report what it said
        return HealthItem("qdrant", False, f"{qdrant.where}: {err}")
    finally:
        qdrant.close()
    return HealthItem("qdrant", True, f"{qdrant.where}, {count} collections")


def sandbox_item(settings: Settings) -> HealthItem:
    """Which isolation sandboxed jobs get here, measured by running a probe job."""
    from activities.sandbox.job import isolation_status  # its probe imports are not needed above

    status = isolation_status(settings.sandbox_isolation)
    return HealthItem("sandbox", status.ok, status.summary)
