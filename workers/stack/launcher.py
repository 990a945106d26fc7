"""``assay up`` / ``down`` / ``check``: the whole embedded stack on one machine.

``up`` starts (or reuses) the Temporal dev server, PostgreSQL and Qdrant, all keeping their
state in the data directory, then runs the worker pools until Ctrl-C or SIGTERM, and stops
everything in reverse order. Settings that point at a Temporal cluster, a PostgreSQL server
or a Qdrant server replace the embedded service of the same kind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

import typer

from workers.settings import Settings
from workers.stack.check import HealthItem, acheck, check
from workers.stack.embedded import EmbeddedPostgres, database_url
from workers.stack.files import open_private_log
from workers.stack.pools import STOP_GRACE_S
from workers.stack.process import (
    SECRETS_ON_STDIN,
    StackError,
    child_env,
    is_alive,
    log_tail,
    split_secrets,
    terminate,
)
from workers.stack.serve import serve
from workers.stack.state import (
    StackInfo,
    forget_gone,
    read_state,
    remove_state,
    running_stack,
    state_path,
)
from workers.stack.temporal import TemporalDevServer

__all__ = ["HealthItem", "StackError", "acheck", "check", "database_url", "down", "serve", "up"]

Say = Callable[[str], None]
UP_COMMAND = [sys.executable, "-m", "workers.cli", "up"]


def say_stderr(message: str) -> None:
    """Tell the person at the terminal (stderr keeps stdout for machine-readable output)."""
    typer.echo(message, err=True)


def up(settings: Settings, *, detach: bool = False, say: Say = say_stderr,
       command: Sequence[str] | None = None, timeout: float = 120.0) -> int:
    """Run the stack in the foreground until stopped, or start it in the background.

    Args:
        settings: the configuration; a detached stack gets it through its environment.
        detach: start ``command`` in a new session logging to ``<data>/logs/stack.log``,
            wait until it is running (every pool served) and return.
        say: where progress messages go.
        command: the foreground ``up`` command a detached start runs.
        timeout: how long a detached start may take; past it the stack is stopped.

    Returns:
        The exit code: 0 when the stack ran (or started) and stopped cleanly, 1 otherwise
        (a detached start that failed says why, with the end of the stack's log).
    """
    try:
        if detach:
            _start_detached(settings, list(command or UP_COMMAND), say, timeout)
        else:
            asyncio.run(serve(settings, say=say))
    except StackError as err:
        say(f"error: {err}")
        return 1
    return 0


def _start_detached(settings: Settings, command: list[str], say: Say, timeout: float) -> None:
    info = running_stack(settings)
    if info is not None:  # reuse it: `assay up --detach` is safe to repeat
        say(f"Assay is already running on {settings.root} (pid {info.pid}, Web UI "
            f"{info.ui_url}); reusing it (stop it with `assay down`)")
        return
    if gone := forget_gone(settings):
        say(f"stack.json recorded {', '.join(gone)}, no longer running: the last stack ended "
            "without `assay down`")
    settings.make_root()
    log_path = settings.logs_dir / "stack.log"
    env, secrets = split_secrets(child_env(settings))
    with open_private_log(log_path) as log:
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                env=env | {SECRETS_ON_STDIN: "1"})
    _hand_over(proc, secrets)
    deadline = time.monotonic() + timeout
    while (info := read_state(settings)) is None or info.pid != proc.pid or (
            info.status != "running"):
        if proc.poll() is not None:
            raise StackError(f"`assay up` exited with code {proc.returncode} while starting; "
                             f"last lines of {log_path}:\n{log_tail(log_path)}")
        if time.monotonic() > deadline:
            terminate(proc.pid, grace=10.0, group=True)
            raise StackError(f"the stack did not start within {timeout:.0f}s; last lines of "
                             f"{log_path}:\n{log_tail(log_path)}")
        time.sleep(0.1)
    proc.returncode = 0  # it runs on by design; do not warn that it outlives this handle
    say(f"Assay is running in the background (pid {proc.pid}), every pool served; Temporal "
        f"Web UI: {info.ui_url}")
    say(f"data directory: {settings.root}")
    say(f"logs: {log_path}; stop it with `assay down`")


def _hand_over(proc: subprocess.Popen[bytes], secrets: dict[str, str]) -> None:
    """Send the detached stack its secrets on stdin (its environment shows none of them)."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError):  # it ended at once: its log says why
        proc.stdin.write(json.dumps(secrets).encode())
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.close()


def down(settings: Settings, *, say: Say = say_stderr, timeout: float = 60.0) -> int:
    """Stop the stack of this data directory, and any service a crashed stack left behind.

    Returns:
        0, also when nothing was running (so ``assay down`` is safe to repeat in scripts);
        1 when the stack had to be killed after ``timeout`` seconds.
    """
    code = 0
    info = running_stack(settings)
    stale = read_state(settings) if info is None else None
    if info is not None:
        say(f"stopping Assay (pid {info.pid})...")
        if terminate(info.pid, grace=timeout, group=True):
            say(f"it did not stop within {timeout:.0f}s and was killed")
            code = 1
        remove_state(settings, info.pid)
    else:
        say(f"Assay is not running on {settings.root}")
        state_path(settings).unlink(missing_ok=True)
    for name in stop_leftovers(settings, stale):
        say(f"stopped {name} left running by an earlier stack")
    if info is not None:
        say("stopped")
    return code


def stop_leftovers(settings: Settings, stale: StackInfo | None = None) -> list[str]:
    """Stop what a stack that ended without ``assay down`` left running.

    That is the worker process of the ``stale`` record (it stops by itself once it notices its
    stack is gone), and the embedded services of this data directory that no stack owns.
    """
    stopped: list[str] = []
    if stale is not None and stale.workers_pid is not None and is_alive(
            stale.workers_pid, stale.workers_started):
        terminate(stale.workers_pid, grace=STOP_GRACE_S)
        stopped.append(f"the worker process (pid {stale.workers_pid})")
    temporal = TemporalDevServer(settings)
    if temporal.owned_pid() is not None:
        temporal.stop()
        stopped.append("the Temporal dev server")
    postgres = EmbeddedPostgres(settings.postgres_dir)
    if settings.database_url is None and postgres.pid is not None:
        postgres.stop()
        stopped.append("PostgreSQL")
    return stopped


