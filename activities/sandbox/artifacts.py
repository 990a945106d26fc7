"""The artifacts a job left behind: every regular file in its working directory, hashed.

Runs after every process of the job is dead and the files belong to the worker again, so
nothing can swap a file while it is hashed, or between hashing and :func:`store_artifacts`
putting it in the artifact store (where verification, dependants and reports fetch it).
Symbolic links are never followed (a link to ``/etc/shadow`` must not turn into an artifact a
later job can read) and are reported instead.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from activities.artifacts.store import ArtifactStore, StoreError, StoreUnavailableError
from activities.common.digests import drain
from activities.sandbox.sources import store_unreachable
from activities.sandbox.workspace import RESERVED, Layout
from workflows.contracts.execution import Artifact

MAX_ARTIFACTS = 1000
"""Artifacts listed per job; the list travels in workflow history, which must stay small."""
_MAX_NOTES = 5
_PUTS_AT_ONCE = 8


def walk_files(layout: Layout) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Every non-directory entry below the workspace except the sandbox's own files."""
    excluded = {layout.filename, *layout.inputs}

    def walk(directory: str, prefix: str) -> Iterator[tuple[str, os.DirEntry[str]]]:
        with os.scandir(directory) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                rel = f"{prefix}{entry.name}"
                if (not prefix and entry.name in RESERVED) or rel in excluded:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    yield from walk(entry.path, f"{rel}/")
                else:
                    yield rel, entry

    yield from walk(str(layout.path), "")


def collect_artifacts(layout: Layout) -> tuple[list[Artifact], list[str]]:
    """The job's artifacts (name, size, sha256, path) and notes on entries left out."""
    artifacts: list[Artifact] = []
    notes: list[str] = []
    unlisted = 0
    for name, entry in walk_files(layout):
        if not _encodable(name):
            notes.append(f"{name.encode('utf-8', 'replace')!r} has a name that is not UTF-8")
        elif entry.is_symlink():
            notes.append(f"symlink {name!r} -> {os.readlink(entry.path)!r} is not an artifact "
                         "(links are never followed)")
        elif not entry.is_file(follow_symlinks=False):
            notes.append(f"{name!r} is not a regular file")
        elif len(artifacts) >= MAX_ARTIFACTS:
            unlisted += 1
        else:
            try:
                size, digest = hash_file(entry.path)
            except OSError as err:  # e.g. the job made it unreadable: the job's fault, noted
                notes.append(f"{name!r} could not be read ({err.strerror or err})")
                continue
            artifacts.append(Artifact(name=name, size=size, sha256=digest, path=entry.path))
    if unlisted:
        notes.append(f"{unlisted} more files not listed (at most {MAX_ARTIFACTS} artifacts; "
                     "bundle many small files into an archive)")
    return artifacts, _shorten(notes)


def store_artifacts(store: ArtifactStore, artifacts: list[Artifact]) -> None:
    """Put every artifact in the store, a few at a time (each put is a round trip to S3).

    Raises:
        ApplicationError: ``StoreUnavailable`` (transient) if the store cannot be reached.
    """
    def put(artifact: Artifact) -> None:
        stored = store.put(Path(artifact.path))
        if stored.sha256 != artifact.sha256:
            raise StoreError(f"artifact {artifact.name!r} changed after it was hashed")

    with ThreadPoolExecutor(max_workers=_PUTS_AT_ONCE) as pool:
        try:
            for _ in pool.map(put, artifacts):
                pass
        except StoreUnavailableError as err:
            raise store_unreachable("putting the job's artifacts in the store", err) from err


def hash_file(path: str) -> tuple[int, str]:
    """Size and streamed sha256 of a regular file, refusing to follow a symlink."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return drain(handle)


def _encodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shorten(notes: list[str]) -> list[str]:
    if len(notes) <= _MAX_NOTES:
        return notes
    return [*notes[:_MAX_NOTES], f"and {len(notes) - _MAX_NOTES} more entries skipped"]
