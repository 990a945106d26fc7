"""Qdrant for the stack: local mode (a directory) or a Qdrant server.

Local mode admits one process per directory (it holds a file lock), so opening it from a
second process fails; this module says which process holds it, so the message can name it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from activities.vectors.locks import lock_holder
from workers.stack.process import StackError

if TYPE_CHECKING:
    from qdrant_client import QdrantClient


class QdrantInUseError(StackError):
    """Qdrant's local storage is held by another process (local mode allows only one)."""

    def __init__(self, path: Path, pid: int | None) -> None:
        who = "another process" if pid is None else f"pid {pid}"
        if pid == os.getpid():
            who = "this process"
        super().__init__(
            f"Qdrant's local storage {path} is in use by {who}; local mode allows one process "
            "at a time: stop that process, or run a Qdrant server and set ASSAY_QDRANT_URL")
        self.path, self.pid = path, pid


class QdrantLocal:
    """Qdrant in local mode (a directory, one process at a time), or a server at ``url``."""

    def __init__(self, path: Path, *, url: str | None = None) -> None:
        self.path = path.expanduser().resolve()
        self.url = url
        self._client: QdrantClient | None = None

    @property
    def where(self) -> str:
        """The server URL or storage directory, for messages."""
        return self.url or str(self.path)

    def open(self) -> QdrantClient:
        """Open the storage (or connect to the server) and return the client.

        Raises:
            QdrantInUseError: another process holds the local storage.
        """
        if self._client is not None:
            return self._client
        from qdrant_client import QdrantClient  # a second to import: only when used

        if self.url:
            self._client = QdrantClient(url=self.url, timeout=5)
            return self._client
        locked, pid = lock_holder(self.path)
        if locked:
            raise QdrantInUseError(self.path, pid)
        self.path.mkdir(parents=True, exist_ok=True)
        try:
            self._client = QdrantClient(path=str(self.path))
        except RuntimeError as err:  # lost a race for the lock since the check above
            raise QdrantInUseError(self.path, lock_holder(self.path)[1]) from err
        return self._client

    def healthy(self) -> bool:
        """Whether the storage or server answers a collections listing."""
        try:
            self.open().get_collections()
        except Exception:  # any failure means "not healthy"; open() explains it when called
            return False
        return True

    def close(self) -> None:
        """Close the client, releasing local storage for other processes."""
        if self._client is not None:
            self._client.close()
            self._client = None
