"""The stack's worker process: every pool in one child process, watched and restarted.

The pools run apart from the process that supervises the services, so a worker that dies (a
crash, the kernel's OOM killer, a stray kill) takes down only itself: the stack's watchdog
starts it again, with backoff, and says so in its log, and ``assay check`` reads its pid and
whether it serves from ``stack.json``. The child stops when the stack asks (SIGTERM), and also
when the stack is gone: its stdin is a pipe from the stack, which closes when the stack dies.

The child runs ``workers.stack.worker_main``; ``assay worker`` is the command for serving pools
by hand.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable

from temporalio.client import Client
from temporalio.service import RPCError

from workers.pools.builders import SERVED_POOLS
from workers.settings import Settings
from workers.stack.check import poller_kinds, pollers
from workers.stack.process import StackError, child_env, start_time, stop_child
from workers.stack.state import StackInfo, write_state
from workers.stack.temporal import connect
from workflows.contracts.pools import Pool

Say = Callable[[str], None]
BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0)
"""Waits before restarting a worker process that keeps dying: one more step each time."""
STEADY_S = 60.0
"""A worker process that ran this long before dying starts the backoff afresh."""
SERVE_TIMEOUT_S = 90.0
"""How long a newly started worker process may take to poll every queue."""
STOP_GRACE_S = 30.0
"""How long a stopping worker process may take (running activities are cancelled first)."""


def worker_identity(pid: int) -> str:
    """The identity the worker process polls with (the SDK's default, spelled out)."""
    return f"{pid}@{socket.gethostname()}"


def exit_text(code: int) -> str:
    """How a process ended, in words: its exit code or the signal that killed it."""
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


class WorkerProcess:
    """The stack's child process running the pools: started, watched, restarted, stopped."""

    def __init__(self, settings: Settings, pools: list[Pool], *, database_url: str,
                 info: StackInfo, say: Say, secrets: dict[str, str] | None = None) -> None:
        self.settings = settings
        self.served = [p for p in pools if p in SERVED_POOLS]
        self.command = [sys.executable, "-m", "workers.stack.worker_main",
                        *(p.value for p in self.served)]
        # The secrets the stack withheld from its services (``AWS_*`` credentials...) come
        # back here, where the pools use them; Assay's own come from its settings.
        given = {k: v for k, v in (secrets or {}).items() if not k.startswith("ASSAY_")}
        self.env = given | child_env(settings) | {"ASSAY_DATABASE_URL": database_url}
        # The stack's workers are this machine's only version: each start promotes it.
        self.env["ASSAY_DEPLOYMENT_SET_CURRENT"] = settings.deployment_set_current or "always"
        self.info = info
        self.say = say
        self.proc: subprocess.Popen[bytes] | None = None
        self.began = 0.0
        self.failures = 0
        """Deaths in a row, each within ``STEADY_S`` of its start: the step of the backoff."""
        self.restart_at: float | None = None
        self.stopping = False
        self._client: Client | None = None

    def start(self) -> None:
        """Start the worker process and record it in ``stack.json`` (not serving yet)."""
        # A process group of its own: a Ctrl-C at the terminal reaches the stack, which
        # decides how to stop it, and never a worker that is still importing.
        self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, env=self.env,
                                     process_group=0)
        self.began = time.monotonic()
        self.info.workers_pid = self.proc.pid
        self.info.workers_started = start_time(self.proc.pid) or 0.0
        self.info.workers_serving = False
        write_state(self.settings, self.info)

    async def wait_serving(self, timeout: float = SERVE_TIMEOUT_S) -> None:
        """Wait until the worker process polls every pool's queue.

        Raises:
            StackError: it exited first, or did not poll within ``timeout`` seconds.
        """
        assert self.proc is not None, "start() first"
        deadline = time.monotonic() + timeout
        while not await self.serving():
            code = self.proc.poll()
            if code is not None:
                raise StackError(f"the worker process (pid {self.proc.pid}) {exit_text(code)} "
                                 "while starting; its output is above")
            if time.monotonic() > deadline:
                raise StackError(f"the worker process (pid {self.proc.pid}) did not poll every "
                                 f"pool's queue within {timeout:.0f}s; its output is above")
            await asyncio.sleep(0.2)
        self._record_serving()

    async def serving(self) -> bool:
        """Whether Temporal has seen this worker process poll every queue it serves."""
        if self.proc is None:
            return False
        identity = worker_identity(self.proc.pid)
        try:
            if self._client is None:
                self._client = await connect(self.settings, timeout=2.0)
            for pool in self.served:
                for kind in poller_kinds(pool):
                    seen = await pollers(self._client, self.settings.queue(pool), kind)
                    if all(poller.identity != identity for poller in seen):
                        return False
        except (StackError, RPCError):  # Temporal is restarting: ask again next time
            return False
        return True

    async def tend(self) -> None:
        """One watchdog step: notice a death, restart once the backoff allows, note serving."""
        if self.stopping:
            return
        if self.proc is not None:
            code = self.proc.poll()
            if code is None:
                if not self.info.workers_serving and await self.serving():
                    self._record_serving()
                    self.say(f"the worker process (pid {self.proc.pid}) serves every pool again")
                return
            self._died(code)
        if self.restart_at is not None and time.monotonic() >= self.restart_at:
            self.restart_at = None
            self.info.workers_restarts += 1
            self.start()

    def _died(self, code: int) -> None:
        assert self.proc is not None
        ran = time.monotonic() - self.began
        self.failures = 1 if ran >= STEADY_S else self.failures + 1
        delay = BACKOFF_S[min(self.failures, len(BACKOFF_S)) - 1]
        self.say(f"the worker process (pid {self.proc.pid}) {exit_text(code)} after {ran:.0f}s; "
                 f"restarting it in {delay:.0f}s")
        _close_stdin(self.proc)
        self.proc = None
        self.info.workers_serving = False
        write_state(self.settings, self.info)
        self.restart_at = time.monotonic() + delay

    def _record_serving(self) -> None:
        self.info.workers_serving = True
        write_state(self.settings, self.info)

    async def stop(self, *, force: bool) -> None:
        """Stop the worker process and let no watchdog step restart it.

        SIGTERM first (it shuts its workers down gracefully), SIGKILL after ``STOP_GRACE_S``,
        or after half a second when ``force``.
        """
        self.stopping = True
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            await asyncio.to_thread(stop_child, proc, grace=0.5 if force else STOP_GRACE_S)
        _close_stdin(proc)


def _close_stdin(proc: subprocess.Popen[bytes]) -> None:
    if proc.stdin is not None and not proc.stdin.closed:
        proc.stdin.close()
