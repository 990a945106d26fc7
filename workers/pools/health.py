"""Whether this worker process serves: what a health check asks the worker itself.

A container's health check used to open the metrics port, which answers as long as the
process lives, polling or not. :data:`HEALTH` is what the process knows of itself: which
pools' workers it started and whether each still runs, and when it last reached the
Temporal server (``run_pools`` checks every :data:`PROBE_INTERVAL_S`). The metrics
endpoint answers ``/healthz`` from it (``workers.pools.exporter``): 200 with a JSON
account when every started worker runs and the server answered within
:data:`STALE_AFTER_S`, 503 with the same account otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from temporalio.client import Client

log = logging.getLogger("assay.workers")

PROBE_INTERVAL_S = 15.0
"""How often a worker process asks the server whether it is there."""
PROBE_TIMEOUT_S = 5.0
STALE_AFTER_S = 3 * PROBE_INTERVAL_S
"""A server last reached longer ago than this makes the worker unhealthy."""


@dataclass
class WorkerHealth:
    """The serving state of one worker process; safe to read from the exporter's thread."""

    workers: dict[str, str] = field(default_factory=dict[str, str])
    """Task queue → ``running``, ``stopped`` or ``failed: <reason>``."""
    server_ok_at: float | None = None
    """``time.monotonic()`` of the last answer from the server."""
    server_error: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def serving(self, queue: str) -> None:
        """A worker on ``queue`` started polling."""
        with self._lock:
            self.workers[queue] = "running"

    def ended(self, queue: str, error: BaseException | None) -> None:
        """The worker on ``queue`` returned (a shutdown) or raised ``error``."""
        with self._lock:
            if queue in self.workers:
                self.workers[queue] = "stopped" if error is None else f"failed: {error}"

    def forget(self, queues: list[str]) -> None:
        """The workers on ``queues`` are gone for good (their ``run_pools`` returned)."""
        with self._lock:
            for queue in queues:
                self.workers.pop(queue, None)

    def server(self, ok: bool, error: str | None = None, *,
               now: float | None = None) -> None:
        """Record one answer (or silence) of the Temporal server."""
        with self._lock:
            if ok:
                self.server_ok_at = time.monotonic() if now is None else now
                self.server_error = None
            else:
                self.server_error = error or "the server did not answer"

    def account(self, *, now: float | None = None) -> tuple[bool, dict[str, object]]:
        """Whether the process serves, and why, as plain JSON."""
        moment = time.monotonic() if now is None else now
        with self._lock:
            workers = dict(self.workers)
            age = None if self.server_ok_at is None else moment - self.server_ok_at
            error = self.server_error
        running = bool(workers) and all(state == "running" for state in workers.values())
        reached = age is not None and age <= STALE_AFTER_S and error is None
        return running and reached, {
            "healthy": running and reached,
            "workers": workers,
            "server_answered_s_ago": None if age is None else round(age, 1),
            "server_error": error,
        }

    def clear(self) -> None:
        """Forget everything (a process that starts its workers again; tests)."""
        with self._lock:
            self.workers.clear()
            self.server_ok_at = None
            self.server_error = None


HEALTH = WorkerHealth()
"""The process's one account, like the metrics registry: one set of workers per process."""


async def probe_server(client: Client, health: WorkerHealth = HEALTH, *,
                       interval_s: float = PROBE_INTERVAL_S) -> None:
    """Ask the server whether it serves, every ``interval_s``, until cancelled."""
    while True:
        try:
            ok = await asyncio.wait_for(client.service_client.check_health(),
                                        PROBE_TIMEOUT_S)
            health.server(ok, None if ok else "the server reports it is not serving")
        except asyncio.CancelledError:
            raise
        except Exception as err:  # any failure to reach it is the answer
            health.server(False, f"{type(err).__name__}: {err}".strip())
            log.warning("the Temporal server did not answer the health probe: %s", err)
        await asyncio.sleep(interval_s)


def watch_health(client: Client, queues: list[str], runs: list[asyncio.Task[None]],
                 health: WorkerHealth = HEALTH) -> Callable[[], Awaitable[None]]:
    """Keep ``health`` true to the workers ``runs`` (one per queue) and to the server.

    Returns:
        What to await once the workers stopped: it ends the probe of the server and forgets
        the queues.
    """
    for queue, run in zip(queues, runs, strict=True):
        health.serving(queue)
        run.add_done_callback(
            lambda done, queue=queue: health.ended(
                queue, None if done.cancelled() else done.exception()))
    probe = asyncio.create_task(probe_server(client, health))

    async def stop() -> None:
        probe.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await probe
        health.forget(queues)

    return stop
