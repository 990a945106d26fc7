"""Reading and removing directory trees that someone else made: bounded, iterative, no links.

Every tree Assay reads or removes and does not control itself (a job's working directory, a
skill folder, a docs folder) goes through here, so that no such walk can recurse until the
interpreter's stack runs out (a job can nest thousands of directories), stall on millions of
entries, or follow a symbolic link out of the tree. :func:`walk` lists entries depth first
(or breadth first) with one explicit stack, never follows a link, and raises
:class:`TreeLimitError` past a depth or an entry budget; :func:`remove_tree` deletes a tree of
any depth and path length through directory descriptors, one open at a time, unlocking
directories the job left without permissions.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_DEPTH = 64
"""Directory levels a walk enters below its root unless told otherwise; deeper is refused.

Real outputs (packages, datasets, checkpoints) nest a dozen levels; 64 leaves room for any
of them while keeping a walk's paths far below the system's 4,096-byte limit."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class TreeLimitError(Exception):
    """A tree is deeper, larger or has longer paths than a walk allows.

    Attributes:
        kind: ``depth`` (too deep, or a path too long to name) or ``entries`` (too many).
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Found:
    """One entry of a walk.

    Attributes:
        rel: its path relative to the root, with ``/`` separators.
        entry: its directory entry (``entry.path`` is a full path; stat it without following).
        depth: 1 for the root's own entries, 2 for theirs, and so on.
    """

    rel: str
    entry: os.DirEntry[str]
    depth: int

    def is_dir(self) -> bool:
        """A real directory (a link to one is not)."""
        return self.entry.is_dir(follow_symlinks=False)


OnError = Callable[[str, OSError], None]
"""Called with the relative path (``""`` for the root) of a directory that cannot be listed."""


def walk(root: Path | str, *, max_depth: int = MAX_DEPTH, max_entries: int = 100_000,
         breadth_first: bool = False, prune: Callable[[Found], bool] | None = None,
         on_error: OnError | None = None) -> Iterator[Found]:
    """Every entry below ``root``; links are listed, never followed.

    A directory's entries come in name order, then those of its subdirectories: each
    subdirectory's whole tree in turn (depth first), or level by level (``breadth_first``).

    Args:
        root: the directory to walk (not listed itself).
        max_depth: directory levels that may be entered; an entry deeper than that raises.
        max_entries: entries listed at most; one more raises.
        breadth_first: list shallow entries first (with a budget, they are the ones seen).
        prune: says which directories not to enter (they are still listed).
        on_error: told about directories that cannot be listed; without it, the error raises.

    Raises:
        TreeLimitError: past ``max_depth`` or ``max_entries``, or at a path the system
            cannot name.
        OSError: a directory cannot be listed and there is no ``on_error``.
    """
    pending: deque[tuple[str, str, int]] = deque([(str(root), "", 0)])
    seen = 0
    while pending:
        directory, prefix, depth = pending.popleft() if breadth_first else pending.pop()
        try:
            with os.scandir(directory) as entries:
                listed = sorted(entries, key=lambda e: e.name)
        except OSError as err:
            if err.errno == errno.ENAMETOOLONG:
                raise TreeLimitError("depth", f"{root}: {prefix or './'} is nested deeper "
                                     "than a path can name") from err
            if on_error is None:
                raise
            on_error(prefix, err)
            continue
        below: list[tuple[str, str, int]] = []
        for entry in listed:
            seen += 1
            if seen > max_entries:
                raise TreeLimitError("entries", f"{root}: more than {max_entries} files and "
                                     "directories")
            found = Found(prefix + entry.name, entry, depth + 1)
            if found.depth > max_depth:
                raise TreeLimitError("depth", f"{root}: {found.rel[:200]}... is nested more "
                                     f"than {max_depth} directories deep")
            yield found
            if found.is_dir() and not (prune and prune(found)):
                below.append((entry.path, found.rel + "/", depth + 1))
        # Depth first pops from the end: push in reverse so names still come in order.
        pending.extend(below if breadth_first else reversed(below))


def remove_tree(path: Path) -> None:
    """Delete ``path`` and everything below it, however deep, never following a link.

    Directories the job left without read, write or search permission are unlocked first.
    Missing is not an error.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(path)
        return
    parent = os.open(path.parent, _DIR_FLAGS)
    try:
        _remove_below(parent, path.name)
    finally:
        os.close(parent)


@dataclass
class _Level:
    fd: int
    name: str
    identity: tuple[int, int]
    subdirs: list[str]


def _remove_below(top_parent: int, top: str) -> None:
    """Remove directory ``top`` of ``top_parent``, holding one directory descriptor at a time.

    Going back up opens ``..`` and checks it is the directory that was left, so no path is
    ever longer than one name, and a tree 100,000 levels deep needs no more descriptors.
    """
    levels = [_enter(top_parent, top)]
    while levels:
        here = levels[-1]
        if here.subdirs:
            child = _enter(here.fd, here.subdirs.pop())
            os.close(here.fd)
            here.fd = -1
            levels.append(child)
            continue
        levels.pop()
        if not levels:
            os.close(here.fd)
            os.rmdir(here.name, dir_fd=top_parent)
            return
        up = os.open("..", _DIR_FLAGS, dir_fd=here.fd)
        os.close(here.fd)
        parent = levels[-1]
        if _identity(up) != parent.identity:
            os.close(up)
            raise OSError(errno.ESTALE, f"{top}: a directory moved while it was removed")
        parent.fd = up
        os.rmdir(here.name, dir_fd=up)


def _enter(parent: int, name: str) -> _Level:
    """Open directory ``name`` of ``parent``, unlock it, delete its non-directories."""
    os.chmod(name, 0o700, dir_fd=parent)  # a job may leave a directory unreadable
    fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    subdirs: list[str] = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                subdirs.append(entry.name)
            else:
                os.unlink(entry.name, dir_fd=fd)
    return _Level(fd, name, _identity(fd), subdirs)


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino
