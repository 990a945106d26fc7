"""The foreground ``assay up``: start the services in order, run the pools, stop in reverse.

The stack counts as running once every pool is served: its worker process (see ``pools``)
has polled every queue. Signals drive the shutdown: the first Ctrl-C (or SIGTERM from
``assay down``) stops the worker process gracefully (which releases Qdrant, held by the
pools), then PostgreSQL and Temporal; a second one forces it (the worker process is killed,
PostgreSQL stops immediately, Temporal is killed after a short grace). While the stack runs,
a watchdog restarts an embedded service that dies, on the same data and port, so a killed dev
server loses no run, and restarts the worker process, with backoff, when it dies.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import Callable, Sequence

from workers.pools.builders import SERVED_POOLS
from workers.settings import Settings
from workers.stack.check import postgres_item, qdrant_item
from workers.stack.embedded import ASSAY_DATABASE, EmbeddedPostgres
from workers.stack.pools import WorkerProcess
from workers.stack.process import StackError, is_alive, start_time, withhold_secrets
from workers.stack.state import (
    StackInfo,
    StackLock,
    read_state,
    redact,
    remove_state,
    write_state,
)
from workers.stack.temporal import TemporalDevServer
from workflows.contracts.pools import Pool

log = logging.getLogger("assay.stack")
Say = Callable[[str], None]
WATCH_INTERVAL_S = 1.0


class Stack:
    """The embedded services of one data directory, started in order and stopped in reverse."""

    def __init__(self, settings: Settings, say: Say,
                 secrets: dict[str, str] | None = None) -> None:
        self.settings = settings
        self.say = say
        self.secrets = secrets or {}
        """What :func:`withhold_secrets` took from the environment: the worker process's."""
        self.temporal = TemporalDevServer(settings)
        self.postgres = (EmbeddedPostgres(settings.postgres_dir)
                         if settings.database_url is None else None)
        self.database_url = ""
        self.workers: WorkerProcess | None = None
        self._pg_starting: asyncio.Future[str] | None = None
        self.info: StackInfo | None = None

    async def start(self, info: StackInfo) -> None:
        """Start or reuse each service, recording where it is in ``info``."""
        self.info = info
        began = time.monotonic()
        await self.temporal.start()
        verb = "reused" if self.temporal.reused else "started"
        self.say(f"Temporal {verb} at {self.temporal.address} ({_since(began)})")
        info.temporal_address = self.temporal.address
        info.temporal_namespace, info.ui_url = self.temporal.namespace, self.temporal.ui_url
        began = time.monotonic()
        self._pg_starting = asyncio.ensure_future(asyncio.to_thread(self._start_postgres))
        self.database_url = await self._pg_starting
        info.database_url = redact(self.database_url)
        self._record_pids()
        self.say(f"PostgreSQL ready: {info.database_url} ({_since(began)})")
        # memory's task-type shard admits one process; the pools open it in this process, so
        # here it is only proven usable (and carried over from local mode), then released.
        item = await asyncio.to_thread(qdrant_item, self.settings)
        if not item.ok:
            raise StackError(item.detail)
        info.qdrant = self.settings.qdrant_url or str(self.settings.qdrant_dir)
        self.say(f"Qdrant ready: {item.detail}")

    def _record_pids(self) -> None:
        """Write the services' current pids (and start times) into ``stack.json``."""
        if self.info is None:
            return
        info = self.info
        info.temporal_pid = self.temporal.pid
        info.temporal_started = _started(info.temporal_pid)
        info.postgres_pid = self.postgres.pid if self.postgres is not None else None
        info.postgres_started = _started(info.postgres_pid)
        write_state(self.settings, info)

    def _start_postgres(self) -> str:
        if self.postgres is None:
            return self.settings.database_url.get_secret_value() if (
                self.settings.database_url is not None) else ""
        self.postgres.start()
        self.postgres.ensure_database(ASSAY_DATABASE)
        return self.postgres.url(ASSAY_DATABASE)

    async def check_database(self) -> None:
        """Fail early, with the reason, when a configured database does not answer."""
        if self.postgres is None:
            item = await postgres_item(self.settings)
            if not item.ok:
                raise StackError(f"the database at ASSAY_DATABASE_URL does not answer: "
                                 f"{item.detail}")

    async def start_workers(self, info: StackInfo, pools: list[Pool]) -> None:
        """Start the worker process for ``pools`` and wait until it polls every queue."""
        began = time.monotonic()
        self.workers = WorkerProcess(self.settings, pools, database_url=self.database_url,
                                     info=info, say=self.say, secrets=self.secrets)
        self.say(f"starting the worker process: {', '.join(p.value for p in pools)}")
        self.workers.start()
        await self.workers.wait_serving()
        self.say(f"every pool is served ({_since(began)})")

    async def watch(self) -> None:
        """Restart a service or the worker process that dies while the stack runs."""
        while True:
            await asyncio.sleep(WATCH_INTERVAL_S)
            if self.workers is not None:
                await self.workers.tend()
            pid = self.temporal.pid
            if pid is not None and not is_alive(pid):
                self.say(f"the Temporal dev server (pid {pid}) exited; restarting it")
                self.temporal.stop(grace=0)
                await self.temporal.start()
                self._record_pids()
            if self.postgres is not None and self.postgres.pid is None:
                self.say("PostgreSQL exited; restarting it")
                await asyncio.to_thread(self.postgres.start)
                self._record_pids()

    async def stop(self, *, force: bool) -> None:
        """Stop the worker process, PostgreSQL, then Temporal (each even if another fails).

        Qdrant needs no step of its own: the pools, which hold it, are stopped by then.
        """
        errors: list[str] = []
        if self.workers is not None:
            await self.workers.stop(force=force)
        if self._pg_starting is not None:
            # A start interrupted by a signal goes on in its thread: let it finish first, or
            # the server would come up after this stop and be left running.
            await asyncio.wait([self._pg_starting])
            if not self._pg_starting.cancelled():
                self._pg_starting.exception()  # mark it seen: start() already reported it
        if self.postgres is not None:
            try:
                await asyncio.to_thread(self.postgres.stop, immediate=force)
            except StackError as err:
                errors.append(str(err))
        await asyncio.to_thread(self.temporal.stop, grace=0.5 if force else 10.0)
        if errors:
            raise StackError("; ".join(errors))


class _Signals:
    """SIGINT/SIGTERM handling: first stops gracefully, second forces."""

    def __init__(self, say: Say) -> None:
        self.say = say
        self.stop = asyncio.Event()
        self.forced = False
        self.phase = "starting"
        self.cancelled = False
        self._task = asyncio.current_task()
        self._loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._loop.add_signal_handler(sig, self._on_signal)

    def _on_signal(self) -> None:
        if self.stop.is_set():
            self.forced = True
            self.say("forcing the stop")
        else:
            self.say("stopping: workers first, then PostgreSQL and Temporal "
                     "(Ctrl-C again to force)")
            self.stop.set()
        # While starting there is nothing to drain; once forced, nothing is waited for.
        if self._task is not None and (
                self.phase == "starting" or (self.phase == "running" and self.forced)):
            self.phase, self.cancelled = "stopping", True
            self._task.cancel()

    def remove(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._loop.remove_signal_handler(sig)


async def serve(settings: Settings, pools: Sequence[Pool] | None = None, *,
                say: Say = log.info) -> None:
    """Run the stack in this process until SIGINT/SIGTERM, then stop it in order.

    Args:
        settings: the configuration.
        pools: the worker pools to run; all of them by default, none for services only.
        say: where progress messages go.

    Raises:
        StackError: another stack runs on this data directory, or a service failed.
    """
    lock = StackLock(settings)
    lock.acquire()
    say(f"data directory: {settings.root}")
    if (stale := read_state(settings)) is not None and (gone := stale.gone()):
        say(f"stack.json recorded {', '.join(gone)}, no longer running: the last stack "
            "ended without `assay down`; writing a new record")
    info = StackInfo.for_this_process(settings)
    info.pools = [p.value for p in (list(Pool) if pools is None else pools)]
    write_state(settings, info)
    signals = _Signals(say)
    stack = Stack(settings, say, withhold_secrets())
    try:
        await _run(stack, info, signals)
    except asyncio.CancelledError:
        if not signals.cancelled:
            raise
        _uncancel()
    finally:
        signals.phase = "stopping"
        try:
            await stack.stop(force=signals.forced)
        finally:
            remove_state(settings, info.pid)
            lock.release()
            signals.remove()
    say("stopped")


async def _run(stack: Stack, info: StackInfo, signals: _Signals) -> None:
    await stack.check_database()
    await stack.start(info)
    pools = [pool for pool in map(Pool, info.pools) if pool in SERVED_POOLS]
    if pools:
        await stack.start_workers(info, pools)
    info.status = "running"
    write_state(stack.settings, info)
    stack.say(f"Assay is running (pid {info.pid}); Temporal Web UI: {info.ui_url}")
    signals.phase = "running"
    await _supervise(stack, signals.stop)


async def _supervise(stack: Stack, stop: asyncio.Event) -> None:
    """Run the watchdog until ``stop``, then stop the worker process (a second signal forces).

    Raises:
        StackError: the watchdog could not restart a service.
    """
    watcher = asyncio.create_task(stack.watch())
    stopped = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait([watcher, stopped], return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        stopped.cancel()
        watched, _ = await asyncio.gather(watcher, stopped, return_exceptions=True)
    if stack.workers is not None:
        await stack.workers.stop(force=False)
    if isinstance(watched, Exception):
        raise watched


def _uncancel() -> None:
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()


def _started(pid: int | None) -> float:
    return (start_time(pid) or 0.0) if pid is not None else 0.0


def _since(began: float) -> str:
    return f"{time.monotonic() - began:.2f}s"
