"""``assay check``: the health of every part of the stack, one line each.

It only looks: it starts nothing, so it is safe in a container health check and while a
stack is starting (it writes only a missing data directory, created private, and a dead
stack's ``stack.json``, to forget the pids of services that are gone). Each item says what is
wrong and what to do about it.

A pool is served when a worker polled its queue recently (Temporal records each poller's last
access). For the embedded stack the recorded pids say more, and at once: a stack or worker
process that is gone means its pools are down, however recent their last polls.
"""

from __future__ import annotations

import asyncio
import time

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import PollerInfo, TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.service import RPCError

from activities.vectors.locks import flock_owner
from workers.connection.identity import claimed
from workers.pools.builders import SERVED_POOLS
from workers.pools.versioning import Routing, routing
from workers.settings import Settings
from workers.stack.embedded import EmbeddedPostgres
from workers.stack.host import HealthItem, host_items
from workers.stack.process import StackError, is_alive
from workers.stack.qdrant import QdrantLocal
from workers.stack.state import StackInfo, forget_gone, read_state, running_stack
from workers.stack.temporal import (
    LONG_POLL_S,
    TemporalDevServer,
    connect,
    missing_search_attributes,
)
from workflows.contracts.pools import Pool

EMBEDDED_WINDOW_S = 2.0 * LONG_POLL_S
"""A worker of the embedded stack must have polled this recently: the dev server the stack
launches answers an idle poll after ``LONG_POLL_S`` (10 s), and each answer starts a new one."""
CLUSTER_WINDOW_S = 70.0
"""Elsewhere Temporal holds an idle poll for its default 60 s, so a live worker may show a
last access that old; 10 s more allows for the round trip."""
KINDS = {"workflow": TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
         "activity": TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY}


def check(settings: Settings) -> list[HealthItem]:
    """Check every part of the stack (see :func:`acheck`)."""
    return asyncio.run(acheck(settings))


async def acheck(settings: Settings) -> list[HealthItem]:
    """The stack's process, Temporal, search attributes, pools, PostgreSQL, Qdrant, sandbox."""
    settings.make_root()  # Qdrant's check would create it, open to all
    stack = read_state(settings)
    gone = forget_gone(settings)
    items = [] if stack is None else [stack_item(stack, gone)]
    items += await _temporal_items(settings, stack)
    items.append(await postgres_item(settings))
    items.append(await asyncio.to_thread(qdrant_item, settings))
    items += await asyncio.to_thread(host_items, settings)
    return items


def stack_item(stack: StackInfo, gone: list[str] | None = None) -> HealthItem:
    """Whether the recorded ``assay up`` process still runs, and the services it recorded."""
    dead = f"; {', '.join(gone)} recorded in stack.json no longer run" if gone else ""
    if not stack.alive():
        return HealthItem("stack", False, f"the stack (pid {stack.pid}) is not running: it "
                          f"ended without `assay down`{dead}; run `assay down` to stop what it "
                          "left behind, then `assay up`")
    since = f"pid {stack.pid}, since {stack.started_at}"
    if gone:
        return HealthItem("stack", False, f"{since}{dead}: the stack restarts them; if this "
                          f"persists see {stack.data_dir}/logs/stack.log")
    if stack.status != "running":
        return HealthItem("stack", False, f"{since}: still starting")
    restarts = (f", restarted {stack.workers_restarts} time"
                f"{'s' * (stack.workers_restarts != 1)}" if stack.workers_restarts else "")
    workers = f"; worker process pid {stack.workers_pid}{restarts}" if stack.workers_pid else ""
    return HealthItem("stack", True, since + workers)


def pools_problem(stack: StackInfo | None, settings: Settings) -> str | None:
    """Why the recorded stack's pools cannot be served right now, or None.

    Poll times lag a death by up to the poll window; the stack's pids do not.
    """
    if stack is None or not stack.pools:
        return None
    log = settings.logs_dir / "stack.log"
    if not stack.alive():
        return f"the stack (pid {stack.pid}) that ran its workers is gone"
    if stack.status != "running" or stack.workers_pid is None:
        return "the stack is still starting; its pools are not served yet"
    if not is_alive(stack.workers_pid, stack.workers_started):
        return (f"the worker process (pid {stack.workers_pid}) exited; the stack is "
                f"restarting it (see {log})")
    if not stack.workers_serving:
        return (f"the worker process (pid {stack.workers_pid}) restarted and does not poll "
                f"yet (see {log})")
    return None


def poll_window(settings: Settings) -> float:
    """How recently a live worker must have polled (see ``EMBEDDED_WINDOW_S``)."""
    embedded = TemporalDevServer(settings).owned_pid() is not None
    return EMBEDDED_WINDOW_S if embedded else CLUSTER_WINDOW_S


def poller_kinds(pool: Pool) -> list[str]:
    """What polls a pool's queue: activity workers, and workflow workers where workflows run."""
    return ["workflow", "activity"] if pool in (Pool.ORCHESTRATION, Pool.SKILLS) else ["activity"]


async def pollers(client: Client, queue: str, kind: str) -> list[PollerInfo]:
    """The pollers Temporal has seen on ``queue`` for ``kind`` tasks, with their last access."""
    resp = await client.workflow_service.describe_task_queue(DescribeTaskQueueRequest(
        namespace=client.namespace, task_queue=TaskQueue(name=queue),
        task_queue_type=KINDS[kind]))
    return list(resp.pollers)


async def _temporal_items(settings: Settings, stack: StackInfo | None) -> list[HealthItem]:
    address, namespace = settings.temporal_address, settings.temporal_namespace
    try:
        client = await connect(settings, timeout=3.0)
    except StackError as err:
        down = f"Temporal is not reachable at {address}"
        return [HealthItem("temporal", False, f"{err}; start it with `assay up`"),
                HealthItem("search attributes", False, down),
                *(HealthItem(f"queue {settings.queue(p)}", False, down) for p in Pool)]
    owner = await claimed(client)
    if owner is not None and owner.data_dir != str(settings.root):
        items = [HealthItem("temporal", False, f"{address}, namespace {namespace}, serves the "
                            f"stack of data directory {owner.data_dir}, not {settings.root}: "
                            f"set ASSAY_DATA_DIR={owner.data_dir} to use that stack")]
    else:
        items = [HealthItem("temporal", True, f"{address}, namespace {namespace}"
                            + (f", stack of {owner.data_dir}" if owner else ""))]
    try:
        missing = await missing_search_attributes(client)
    except StackError as err:
        items.append(HealthItem("search attributes", False, str(err)))
    else:
        items.append(HealthItem(
            "search attributes", not missing,
            f"missing {', '.join(sorted(missing))}: run `assay up` to register them"
            if missing else "all registered"))
    window, problem = poll_window(settings), pools_problem(stack, settings)
    for pool in Pool:
        queue = settings.queue(pool)
        if pool not in SERVED_POOLS:
            items.append(HealthItem(f"queue {queue}", True,
                                    "no activities in this version; no worker needed"))
        elif problem is not None:
            items.append(HealthItem(f"queue {queue}", False, problem))
        else:
            items.append(await pollers_item(client, queue, pool, window,
                                            fix=_silent_fix(stack, settings)))
    if problem is None:
        items += await versions_items(client, settings, window)
    return items


async def versions_items(client: Client, settings: Settings, window: float) -> list[HealthItem]:
    """A line per served pool: the deployment versions polling it lately, and their role.

    The pool is down when versioning is on and the deployment's current version does not poll
    it: new runs (or their activities) would wait there.
    """
    routes = Routing()
    if settings.worker_versioning:
        try:
            routes = await routing(client, settings.deployment_name)
        except RPCError as err:
            return [HealthItem("versions", False, f"{err.message}: set "
                               "ASSAY_WORKER_VERSIONING=false for a server without Worker "
                               "Deployments")]
    items: list[HealthItem] = []
    for pool in (p for p in Pool if p in SERVED_POOLS):
        seen: dict[tuple[str, str], int] = {}
        for kind in poller_kinds(pool):
            for poller in await pollers(client, settings.queue(pool), kind):
                if time.time() - poller.last_access_time.ToMicroseconds() / 1e6 < window:
                    opts = poller.deployment_options
                    key = (opts.deployment_name, opts.build_id)
                    seen[key] = seen.get(key, 0) + 1
        parts = [(f"{name} {build} ({_role(routes, settings, name, build)})"
                  if build else "unversioned")
                 + f": {n} poller{'s' * (n != 1)}" for (name, build), n in seen.items()]
        ok = routes.current is None or (settings.deployment_name, routes.current) in seen
        if not ok:
            parts.append(f"the current version {routes.current} does not poll it: start its "
                         "workers, or make a serving version current")
        items.append(HealthItem(f"versions {settings.queue(pool)}", ok,
                                "; ".join(parts) or "no pollers"))
    return items


def _role(routes: Routing, settings: Settings, name: str, build: str) -> str:
    return routes.role(build) if name == settings.deployment_name else "another deployment"


def _silent_fix(stack: StackInfo | None, settings: Settings) -> str | None:
    """What to say of a queue the stack's live worker process has not polled lately."""
    if stack is None or stack.workers_pid is None:
        return None
    return (f"the worker process (pid {stack.workers_pid}) runs but has not polled it: its "
            f"slots may all be busy with long tasks, or it is stuck (see "
            f"{settings.logs_dir / 'stack.log'})")


async def pollers_item(client: Client, queue: str, pool: Pool, window: float, *,
                       fix: str | None = None) -> HealthItem:
    """Whether workers polled ``queue`` within ``window`` seconds (each kind it needs).

    ``fix`` says what to do when none did (default: start a worker).
    """
    counts: dict[str, int] = {}
    for kind in poller_kinds(pool):
        seen = await pollers(client, queue, kind)
        now = time.time()
        counts[kind] = sum(1 for p in seen
                           if now - p.last_access_time.ToMicroseconds() / 1e6 < window)
    detail = ", ".join(f"{n} {kind} poller{'s' * (n != 1)}" for kind, n in counts.items())
    detail += f" seen in the last {window:.0f} s"
    ok = all(counts.values())
    if not ok:
        detail += ": " + (fix or f"no live worker serves it; run `assay up` or `assay worker "
                                 f"--pool {pool.value}`")
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
    """Whether memory's task-type index opens, or is held by the running stack.

    Without a server that is the Qdrant Edge shard under ``qdrant_dir`` (one process at a
    time: the stack's reflection pool holds it while it runs).
    """
    if not settings.qdrant_url:
        return _shard_item(settings)
    qdrant = QdrantLocal(settings.qdrant_dir, url=settings.qdrant_url)
    try:
        count = len(qdrant.open().get_collections().collections)
    except Exception as err:  # unreachable server: report what it said
        return HealthItem("qdrant", False, f"{qdrant.where}: {err}")
    finally:
        qdrant.close()
    return HealthItem("qdrant", True, f"{qdrant.where}, {count} collections")


def _shard_item(settings: Settings) -> HealthItem:
    """Whether the task-type shard opens (carrying local mode's points over if it must)."""
    from activities.memory.index import SHARD, TaskTypeIndex

    where = settings.qdrant_dir / SHARD
    try:
        index = TaskTypeIndex.in_directory(settings.qdrant_dir)
    except RuntimeError as err:
        pid = flock_owner(where / "wal") if (where / "wal").exists() else None
        stack = running_stack(settings)
        if pid is not None and stack is not None and pid in (stack.pid, stack.workers_pid):
            return HealthItem("qdrant", True, f"{where}, held by the stack (pid {pid})")
        return HealthItem("qdrant", False, str(err))
    count = index.vectors.count()
    index.close()
    return HealthItem("qdrant", True, f"{where}, {count} task types")
