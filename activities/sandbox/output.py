"""Bounded capture of a job's stdout and stderr.

A job may print gigabytes; the worker keeps only the first and last bytes of each stream (what
a person needs to see what happened) and counts the rest, so its memory stays flat whatever the
job writes.
"""

from __future__ import annotations

import asyncio
from typing import IO

LAST_LINE_CHARS = 200
"""The most of a job's last printed line its heartbeat carries."""
LAST_LINE_SCAN = 4096
"""How many of the latest bytes :meth:`BoundedCapture.last_line` looks through."""


class BoundedCapture(asyncio.Protocol):
    """Reads one pipe incrementally, keeping at most ``limit`` bytes: a head and a tail.

    Attributes:
        total: bytes the job wrote to this stream.
        closed: set once the pipe reached end of file (every writer is gone).
    """

    def __init__(self, limit: int) -> None:
        self._head_limit = max(0, limit // 4)
        self._tail_limit = max(1, limit - self._head_limit)
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0
        self.closed = asyncio.get_running_loop().create_future()
        self._transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Remember the transport so :meth:`close` can stop reading."""
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        """Count ``data`` and keep it if it belongs to the head or the tail."""
        self.total += len(data)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            # Trim in batches: deleting from the front on every read would be quadratic.
            if len(self._tail) > 2 * self._tail_limit:
                del self._tail[:-self._tail_limit]

    def eof_received(self) -> bool:
        """End of file: let the transport close itself."""
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        """The pipe is closed: nothing more will arrive."""
        if not self.closed.done():
            self.closed.set_result(None)

    def close(self) -> None:
        """Stop reading (a straggler still holds the pipe open); keeps what was read."""
        if self._transport is not None:
            self._transport.close()
        if not self.closed.done():
            self.closed.set_result(None)

    @property
    def truncated(self) -> bool:
        """Whether bytes were dropped from the middle of the stream."""
        return self.total > self._head_limit + self._tail_limit

    def last_line(self, limit: int = LAST_LINE_CHARS) -> str:
        """The last non-blank line written so far, cut to ``limit`` characters (for heartbeats).

        Only the last :data:`LAST_LINE_SCAN` bytes are read, so a job printing one endless
        line costs no more than one printing short ones.
        """
        recent = bytes(self._tail[-LAST_LINE_SCAN:])
        if len(recent) < LAST_LINE_SCAN and not self.truncated:  # head and tail join up
            recent = bytes(self._head[len(recent) - LAST_LINE_SCAN:]) + recent
        lines = recent.decode("utf-8", errors="replace").splitlines()
        last = next((line.strip() for line in reversed(lines) if line.strip()), "")
        return last[:limit]

    def text(self) -> str:
        """The kept bytes as text; a marker says how many bytes were left out in between."""
        tail = bytes(self._tail[-self._tail_limit:])
        if not self.truncated:
            return (bytes(self._head) + tail).decode("utf-8", errors="replace")
        omitted = self.total - len(self._head) - len(tail)
        return (bytes(self._head).decode("utf-8", errors="replace")
                + f"\n[... {omitted} bytes omitted ...]\n"
                + tail.decode("utf-8", errors="replace"))


async def capture(pipe: IO[bytes], limit: int) -> BoundedCapture:
    """Start reading ``pipe`` on the running loop into a fresh :class:`BoundedCapture`."""
    loop = asyncio.get_running_loop()
    protocol = BoundedCapture(limit)
    await loop.connect_read_pipe(lambda: protocol, pipe)
    return protocol
