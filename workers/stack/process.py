"""Process helpers shared by the embedded services and the stack.

The embedded services run as processes that outlive the Python process that started them, so
the stack finds them again by pid. A pid alone can be reused by an unrelated process after a
crash; pairing it with the process's start time tells the two apart. Python processes the
stack starts (itself detached, its worker process) get their settings through
:func:`child_env`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import get_args

import psutil
from pydantic import SecretStr

from workers.settings import Settings


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


SECRET_NAME = re.compile(r"API_KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL|ACCESS_KEY", re.IGNORECASE)
"""Names of environment variables that may hold a secret (``ANTHROPIC_API_KEY``, ``AWS_*``)."""


SECRETS_ON_STDIN = "ASSAY_SECRETS_ON_STDIN"
"""Set in a detached stack's environment: its secrets come on stdin, not in its environment."""


def is_secret(name: str) -> bool:
    """Whether an environment variable may hold a secret.

    That is one of Assay's secret settings (``ASSAY_ANTHROPIC_API_KEY``, ``ASSAY_CODEC_KEYS``...)
    or any variable whose name says it holds one.
    """
    secret_settings = {f"ASSAY_{name.upper()}" for name, field in Settings.model_fields.items()
                       if SecretStr in (field.annotation, *get_args(field.annotation))}
    return name in secret_settings or SECRET_NAME.search(name) is not None


def split_secrets(env: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """``env`` without its secrets, and the secrets."""
    secrets = {name: value for name, value in env.items() if is_secret(name)}
    return {k: v for k, v in env.items() if k not in secrets}, secrets


def withhold_secrets() -> dict[str, str]:
    """Take every secret out of this process's environment, and return them.

    The stack calls it once its settings are read: the services it starts (the Temporal dev
    server, PostgreSQL) inherit its environment and need none of them; only the worker process
    gets them back.
    """
    _, taken = split_secrets(dict(os.environ))
    for name in taken:
        del os.environ[name]
    return taken


def receive_secrets() -> None:
    """Put the secrets a detached start sent on stdin into this environment, if it sent any.

    A detached stack gets them so (see ``launcher``), so they are never part of its process's
    environment as the system shows it.
    """
    if os.environ.pop(SECRETS_ON_STDIN, None) != "1":
        return
    os.environ.update({str(k): str(v) for k, v in json.loads(sys.stdin.read() or "{}").items()})


def child_env(settings: Settings) -> dict[str, str]:
    """This environment plus every setting as ``ASSAY_*``, so the child sees the same config.

    Each value is written as the child's settings will parse it: secrets as their values
    (``str()`` of a secret is its mask, which the child would take for the key), mappings
    and flags as JSON, the data directory as an absolute path.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    source = Path(__file__).resolve().parents[2]
    if (source / "pyproject.toml").exists():  # a source checkout: importable from anywhere
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), env.get("PYTHONPATH")]))
    plain = settings.model_dump(mode="json")
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if value is None:
            continue
        if isinstance(value, SecretStr):
            text = value.get_secret_value()
        elif name == "data_dir":
            text = str(settings.root)
        else:
            text = plain[name] if isinstance(plain[name], str) else json.dumps(plain[name])
        env[f"ASSAY_{name.upper()}"] = text
    return env
