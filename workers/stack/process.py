"""Process helpers shared by the embedded services and the stack.

The embedded services run as processes that outlive the Python process that started them, so
the stack finds them again by pid. A pid alone can be reused by an unrelated process after a
crash; pairing it with the process's start time tells the two apart.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import psutil


class StackError(RuntimeError):
    """A problem with the embedded stack, phrased for the person running ``assay``."""


def log_tail(path: Path, lines: int = 25) -> str:
    """The last ``lines`` lines of a log file, for error messages."""
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return f"(no log at {path})"
    tail = text.splitlines()[-lines:]
    return "\n".join(tail) if tail else f"({path} is empty)"


def start_time(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), or None if it does not exist."""
    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def is_alive(pid: int, started: float | None = None) -> bool:
    """Whether ``pid`` runs and, if ``started`` is given, is the process that started then."""
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        created = proc.create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
    # create_time is derived from boot time and clock ticks: allow for rounding.
    return started is None or abs(created - started) < 1.0


def wait_gone(pid: int, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``pid`` to exit (reaping it if it is our child).

    A process that exited but is not our child stays a zombie until its own parent reaps it;
    that counts as gone, hence the short waits between liveness checks.
    """
    deadline = time.monotonic() + timeout
    while is_alive(pid):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        try:
            psutil.Process(pid).wait(min(remaining, 0.05))
        except psutil.NoSuchProcess:
            return True
        except psutil.TimeoutExpired:
            continue
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reap our own zombie child, if it is one
    return True


def terminate(pid: int, *, grace: float, group: bool = False) -> bool:
    """SIGTERM ``pid``, then SIGKILL it after ``grace`` seconds; True if it had to be killed.

    With ``group`` and ``pid`` leading its own process group (a detached session), the kill
    takes the whole group, so children it had not stopped yet go with it.
    """
    if not is_alive(pid):
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    if wait_gone(pid, grace):
        return False
    try:
        if group and os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return False
    wait_gone(pid, 5.0)
    return True


def stop_child(proc: subprocess.Popen[bytes], *, grace: float) -> None:
    """Like :func:`terminate`, for a child of this process (reaped, not left a zombie)."""
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5.0)
