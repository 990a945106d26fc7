"""The sha256 of files, read in chunks: inputs are pinned by it and artifacts checked by it.

Data files, job inputs and artifacts may be far larger than memory, so they are never read
whole. A plain file's digest comes from :func:`hashlib.file_digest`; where the bytes are
copied or counted on the way, :func:`drain` hashes them as they pass.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

CHUNK = 1 << 20
"""Bytes read at a time while copying."""


def file_sha256(path: Path) -> str:
    """The hex sha256 of the file at ``path``.

    Raises:
        OSError: the file cannot be opened or read.
    """
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def drain(reader: BinaryIO, write: Callable[[bytes], object] | None = None) -> tuple[int, str]:
    """Read ``reader`` to its end: how many bytes it gave and their hex sha256.

    Args:
        reader: an open binary stream.
        write: called with each chunk as it is read (to copy the bytes while hashing them).
    """
    digest = hashlib.sha256()
    size = 0
    while chunk := reader.read(CHUNK):
        digest.update(chunk)
        size += len(chunk)
        if write is not None:
            write(chunk)
    return size, digest.hexdigest()


def hash_file(path: str | Path) -> tuple[int, str]:
    """Size and streamed sha256 of a regular file, refusing to follow a symlink.

    Raises:
        OSError: ``path`` is a link, not a regular file, or cannot be read.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return drain(handle)
