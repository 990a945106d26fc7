"""The artifact store: files Assay keeps, put and fetched by their sha256.

A job's inputs reach the sandbox only through here. The submitting side (``assay run``) puts
each input in the store and names it in the plan by digest; the sandbox worker opens nothing
but ``<root>/sha256/<first two hex digits>/<digest>``, walking down from the root without
following a single symbolic link. So a request naming ``/etc/shadow`` (or a link planted in the
store that points there) can make the worker read nothing outside the store, whoever sends it.

:class:`ArtifactStore` is the interface; :class:`LocalArtifactStore` keeps the files in a local
(or shared) directory, :class:`activities.artifacts.s3.S3ArtifactStore` in a bucket. Every
read re-hashes what it hands out (:func:`write_verified`): a store entry is trusted to be
there, never to be right.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from activities.common.digests import CHUNK, drain

_SHA256 = re.compile(r"[0-9a-f]{64}")
_BLOBS = "sha256"


class StoreError(Exception):
    """A store entry cannot be given out; the message names no content, no digest found."""


class NotStoredError(StoreError):
    """Nothing is stored under the name asked for."""


class UnsafeEntryError(StoreError):
    """The name, or what is stored under it, is not a plain file reachable without links."""


class DamagedEntryError(StoreError):
    """What is stored under a digest does not have that digest; it was not handed out.

    The message names the digest asked for (the caller's own), never the one found.
    """


class TooLargeError(StoreError):
    """The stored content is larger than the reader allowed; nothing was kept."""


class StoreUnavailableError(StoreError):
    """The store could not be reached, or a transfer broke off: a retry may succeed."""


@dataclass(frozen=True)
class StoredFile:
    """What :meth:`ArtifactStore.put` stored: the content's digest and size."""

    sha256: str
    size: int


class ArtifactStore(Protocol):
    """Files kept by content: put a file, open or fetch it again by its sha256.

    ``open`` and ``fetch`` hand out only bytes that have the digest asked for: a damaged
    entry is :class:`DamagedEntryError`, never wrong bytes.
    """

    def put(self, path: Path) -> StoredFile:
        """Store the regular file at ``path`` (read once, hashed while copied).

        Raises:
            StoreError: ``path`` is not a regular file.
            OSError: ``path`` or the store cannot be read or written.
        """
        ...

    def open(self, sha256: str) -> BinaryIO:
        """The stored content with this digest, checked against it, opened for reading.

        Raises:
            UnsafeEntryError: ``sha256`` is not a digest, or the entry is a link or not a file.
            NotStoredError: nothing is stored under ``sha256``.
            DamagedEntryError: the stored bytes do not have that digest.
            StoreUnavailableError: the store cannot be reached (transient).
            OSError: the store cannot be read.
        """
        ...

    def fetch(self, sha256: str, dest: Path, *, max_bytes: int | None = None) -> StoredFile:
        """Copy the content with this digest to a new read-only file ``dest``, checked.

        The bytes go to a temporary file beside ``dest``, renamed only once their digest
        matches: a mismatch, an oversize entry or a transfer that breaks off leaves nothing
        at ``dest``.

        Raises:
            TooLargeError: the content is larger than ``max_bytes``.
            and everything :meth:`open` raises.
        """
        ...


def is_sha256(value: str) -> bool:
    """Whether ``value`` is a sha256 as the store names files (64 lowercase hex digits)."""
    return _SHA256.fullmatch(value) is not None


class LocalArtifactStore:
    """An :class:`ArtifactStore` in a directory: ``<root>/sha256/<2 hex>/<digest>``.

    The root is created private to its owner (mode 0700) and the directories below it take
    the root's mode, so an operator who creates the root with group access (e.g. 2770) shares
    the store with that group; files are read-only (0444). Jobs never see the store, and must
    not be able to browse it either where they share a filesystem with it (``rlimits``
    isolation): keep the root closed to other users.

    Args:
        root: the store's directory (created on the first put).
    """

    def __init__(self, root: Path) -> None:
        self.root = root.expanduser().resolve()

    def put(self, path: Path) -> StoredFile:
        """Copy ``path`` into the store under its sha256, atomically; see :class:`ArtifactStore`."""
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as source:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise StoreError(f"{path} is not a regular file")
            blobs = self.root / _BLOBS
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            mode = stat.S_IMODE(self.root.stat().st_mode)
            blobs.mkdir(mode=mode, exist_ok=True)
            temp_fd, temp = tempfile.mkstemp(dir=blobs, prefix=".put-")
            try:
                with os.fdopen(temp_fd, "wb") as target:
                    size, digest = drain(source, target.write)
                    target.flush()
                    os.fsync(target.fileno())
                os.chmod(temp, 0o444)
                shelf = blobs / digest[:2]
                shelf.mkdir(mode=mode, exist_ok=True)
                # Always replace: an entry left damaged by a crash heals on the next put.
                os.replace(temp, shelf / digest)
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise
        return StoredFile(sha256=digest, size=size)

    def open(self, sha256: str) -> BinaryIO:
        """Open the entry named ``sha256``, checked first; see :class:`ArtifactStore`."""
        handle = os.fdopen(self._entry(sha256), "rb")
        try:
            _, digest = drain(handle)
            if digest != sha256:
                raise DamagedEntryError(damaged(sha256, "the local store"))
            handle.seek(0)
        except BaseException:
            handle.close()
            raise
        return handle

    def fetch(self, sha256: str, dest: Path, *, max_bytes: int | None = None) -> StoredFile:
        """Copy the entry named ``sha256`` to ``dest``, checked; see :class:`ArtifactStore`."""
        with os.fdopen(self._entry(sha256), "rb") as source:
            return write_verified(iter(lambda: source.read(CHUNK), b""), sha256, dest,
                                  max_bytes=max_bytes, where="the local store")

    def _entry(self, sha256: str) -> int:
        if not is_sha256(sha256):
            raise UnsafeEntryError("the name asked for is not a sha256 (64 lowercase hex "
                                   "digits)")
        return open_beneath(self.root, (_BLOBS, sha256[:2], sha256))


def parts_below(root: Path, path: str) -> list[str] | None:
    """The parts of ``path`` below ``root`` (for :func:`open_beneath`), or ``None``.

    ``None`` when ``path`` does not start with ``root`` or has an empty, ``.`` or ``..`` part:
    a recorded path that claims to be below the root must be literally so.
    """
    prefix = f"{root}/"
    parts = path.removeprefix(prefix).split("/")
    if not path.startswith(prefix) or any(p in ("", ".", "..") for p in parts):
        return None
    return parts


def open_beneath(root: Path, parts: Sequence[str]) -> int:
    """Open the regular file ``root/parts...`` for reading, following no link on the way.

    Each directory is opened relative to the one before with ``O_NOFOLLOW``, so neither a
    link planted as the file nor one planted as any directory on the way can lead outside
    ``root``. A FIFO is opened without blocking and refused.

    Returns:
        An open file descriptor (the caller closes it).

    Raises:
        UnsafeEntryError: a part is empty, ``.``, ``..`` or holds a ``/``; a link or a
            non-directory is on the way; the file is a link or not a regular file.
        NotStoredError: a part, or the root, does not exist.
        OSError: anything else (e.g. permission denied).
    """
    if not parts or any(p in ("", ".", "..") or "/" in p or "\0" in p for p in parts):
        raise UnsafeEntryError("the path has empty, '.' or '..' parts")
    try:
        directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError as err:
        raise NotStoredError("the root does not exist") from err
    try:
        for part in parts[:-1]:
            inner = _open_part(part, os.O_DIRECTORY, directory)
            os.close(directory)
            directory = inner
        fd = _open_part(parts[-1], os.O_NONBLOCK, directory)
    finally:
        os.close(directory)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafeEntryError(f"{parts[-1]!r} is not a regular file")
    return fd


def _open_part(name: str, flags: int, directory: int) -> int:
    try:
        return os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | flags,
                       dir_fd=directory)
    except FileNotFoundError as err:
        raise NotStoredError(f"{name!r} does not exist") from err
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UnsafeEntryError(f"{name!r} is a symbolic link") from err
        if err.errno == errno.ENOTDIR:
            raise UnsafeEntryError(f"{name!r} is a symbolic link or not a directory") from err
        raise


def damaged(sha256: str, where: str) -> str:
    """The message of a :class:`DamagedEntryError` (names the digest asked for only)."""
    return (f"the entry sha256:{sha256} in {where} does not have that digest (it was damaged "
            "or replaced); refused. Put the file in the store again.")


def write_verified(chunks: Iterator[bytes], sha256: str, dest: Path, *,
                   max_bytes: int | None, where: str) -> StoredFile:
    """Write ``chunks`` to a new read-only ``dest`` only if they have the digest ``sha256``.

    They go to a temporary file beside ``dest`` first; whatever goes wrong (a mismatch, more
    than ``max_bytes``, an error while reading ``chunks``) removes it and leaves ``dest``
    untouched.
    """
    hasher = hashlib.sha256()
    size = 0
    fd, temp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                size += len(chunk)
                if max_bytes is not None and size > max_bytes:
                    raise TooLargeError(f"the entry sha256:{sha256} is over {max_bytes:,} bytes")
                hasher.update(chunk)
                out.write(chunk)
        if hasher.hexdigest() != sha256:
            raise DamagedEntryError(damaged(sha256, where))
        os.chmod(temp, 0o444)
        os.replace(temp, dest)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return StoredFile(sha256=sha256, size=size)
