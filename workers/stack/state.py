"""``stack.json`` and ``stack.lock``: how processes find the running ``assay up`` of a data dir.

The lock (an flock held for the life of ``assay up``) makes a second ``up`` on the same data
directory impossible; ``stack.json`` says who holds it and where its services are, for
``assay down``, ``assay check`` and people.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from sqlalchemy.engine import make_url

from workers.settings import Settings
from workers.stack.process import StackError, is_alive, start_time


@dataclass
class StackInfo:
    """What ``stack.json`` records about a running ``assay up``."""

    pid: int
    pid_started: float
    started_at: str
    data_dir: str
    status: str = "starting"
    """``starting`` until every service is healthy and every pool is served, then
    ``running``."""
    temporal_address: str = ""
    temporal_namespace: str = ""
    temporal_pid: int | None = None
    temporal_started: float = 0.0
    """The dev server's start time, so a reused pid is not taken for it."""
    ui_url: str = ""
    database_url: str = ""
    """Without its password."""
    postgres_pid: int | None = None
    postgres_started: float = 0.0
    qdrant: str = ""
    pools: list[str] = field(default_factory=list[str])
    workers_pid: int | None = None
    """The child process that runs the pools (restarted by the stack when it dies)."""
    workers_started: float = 0.0
    """Its start time, so a reused pid is not taken for it."""
    workers_serving: bool = False
    """Whether it has polled every pool's queue since it last started."""
    workers_restarts: int = 0

    @classmethod
    def for_this_process(cls, settings: Settings) -> StackInfo:
        """A record naming the current process as the stack."""
        pid = os.getpid()
        return cls(pid=pid, pid_started=start_time(pid) or 0.0,
                   started_at=datetime.now(UTC).isoformat(timespec="seconds"),
                   data_dir=str(settings.root))

    def alive(self) -> bool:
        """Whether the recorded process is still running (not merely a reused pid)."""
        return is_alive(self.pid, self.pid_started)

    def gone(self) -> list[str]:
        """The recorded service processes that no longer run, each as ``name (pid N)``."""
        recorded = (("the Temporal dev server", self.temporal_pid, self.temporal_started),
                    ("PostgreSQL", self.postgres_pid, self.postgres_started))
        return [f"{name} (pid {pid})" for name, pid, started in recorded
                if pid is not None and not is_alive(pid, started or None)]

    def forget_gone(self) -> None:
        """Clear the pids of recorded service processes that no longer run."""
        if self.temporal_pid is not None and not is_alive(self.temporal_pid,
                                                          self.temporal_started or None):
            self.temporal_pid, self.temporal_started = None, 0.0
        if self.postgres_pid is not None and not is_alive(self.postgres_pid,
                                                          self.postgres_started or None):
            self.postgres_pid, self.postgres_started = None, 0.0


def state_path(settings: Settings) -> Path:
    """Where ``stack.json`` lives."""
    return settings.root / "stack.json"


def read_state(settings: Settings) -> StackInfo | None:
    """The recorded stack, or None when there is no readable record."""
    try:
        raw: dict[str, Any] = json.loads(state_path(settings).read_text())
        return StackInfo(**raw)
    except (FileNotFoundError, ValueError, TypeError):
        return None


def running_stack(settings: Settings) -> StackInfo | None:
    """The recorded stack if its process is alive, else None."""
    info = read_state(settings)
    return info if info is not None and info.alive() else None


def write_state(settings: Settings, info: StackInfo) -> None:
    """Write ``stack.json`` atomically, readable by its user only: no reader sees half a record."""
    path = state_path(settings)
    tmp = path.with_suffix(".json.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(json.dumps(asdict(info), indent=2) + "\n")
    tmp.replace(path)


def forget_gone(settings: Settings) -> list[str]:
    """Note in ``stack.json`` that the services it records as running are gone.

    Only a record whose stack is gone is rewritten (a live stack keeps its own record, and
    restarts its services itself).

    Returns:
        The gone processes, each as ``name (pid N)``; empty when none is.
    """
    info = read_state(settings)
    if info is None:
        return []
    gone = info.gone()
    if gone and not info.alive():
        info.forget_gone()
        write_state(settings, info)
    return gone


def remove_state(settings: Settings, pid: int) -> None:
    """Remove ``stack.json`` if it still names ``pid``."""
    info = read_state(settings)
    if info is not None and info.pid == pid:
        state_path(settings).unlink(missing_ok=True)


def redact(url: str) -> str:
    """``url`` with any password masked (and otherwise as written)."""
    parsed = make_url(url)
    return url if parsed.password is None else parsed.render_as_string(hide_password=True)


class StackLock:
    """The exclusive flock ``assay up`` holds on ``<data>/stack.lock`` while it runs."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.path = settings.root / "stack.lock"
        self._handle: IO[str] | None = None

    def acquire(self) -> None:
        """Take the lock.

        Raises:
            StackError: another ``assay up`` holds it; the message names its pid.
        """
        self.settings.make_root()
        handle = self.path.open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise StackError(already_running(self.settings)) from None
        self._handle = handle

    def release(self) -> None:
        """Give the lock up (closing the file releases it)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def already_running(settings: Settings) -> str:
    """The message for a second ``assay up`` on a data directory."""
    info = read_state(settings)
    who = "another process" if info is None else f"pid {info.pid} (since {info.started_at})"
    ui = f", Web UI {info.ui_url}" if info is not None and info.ui_url else ""
    return (f"Assay is already running on {settings.root}: {who}{ui}. Stop it with "
            "`assay down`, or give this one its own ASSAY_DATA_DIR")
