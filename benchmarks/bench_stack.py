"""Start-up times of the embedded services (what `assay up` waits for)."""

from __future__ import annotations

import asyncio
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from workers.settings import Settings
from workers.stack.embedded import EmbeddedPostgres
from workers.stack.qdrant import QdrantLocal
from workers.stack.temporal import TemporalDevServer


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


async def measure() -> dict[str, float]:
    """Milliseconds to a healthy service: first start, restart, and Qdrant's local open."""
    root = Path(tempfile.mkdtemp(prefix="assay-bench-stack-"))
    try:
        pg = EmbeddedPostgres(root / "pg")
        figures = {"postgres_first_ms": _timed(pg.start)}
        pg.stop()
        figures["postgres_restart_ms"] = _timed(pg.start)
        pg.stop()
        settings = Settings(data_dir=root / "assay",
                            temporal_address=f"127.0.0.1:{_free_port()}",
                            temporal_ui_port=_free_port())
        server = TemporalDevServer(settings)
        start = time.perf_counter()
        await server.start()
        figures["temporal_first_ms"] = (time.perf_counter() - start) * 1000
        server.stop()
        start = time.perf_counter()
        await server.start()
        figures["temporal_restart_ms"] = (time.perf_counter() - start) * 1000
        server.stop()
        qdrant = QdrantLocal(root / "qdrant")
        figures["qdrant_open_ms"] = _timed(qdrant.open)
        qdrant.close()
        return figures
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    print(asyncio.run(measure()))
