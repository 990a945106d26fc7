"""The artifacts a job left behind: every regular file in its working directory, hashed.

Runs after every process of the job is dead and the files belong to the worker again, so
nothing can swap a file while it is hashed, or between hashing and :func:`store_artifacts`
putting it in the artifact store (where verification, dependants and reports fetch it).
Symbolic links are never followed (a link to ``/etc/shadow`` must not turn into an artifact a
later job can read) and are reported instead. What is stored is bounded by apparent size
(per artifact and per job, :class:`~activities.sandbox.limits.Limits`), since the store
reads a sparse file's holes back as real bytes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from activities.artifacts.store import ArtifactStore, StoreError, StoreUnavailableError
from activities.common.digests import hash_file
from activities.common.trees import Found, walk
from activities.sandbox.limits import Limits
from activities.sandbox.sources import store_unreachable
from activities.sandbox.workspace import RESERVED, Layout
from workflows.contracts.execution import Artifact

MAX_ARTIFACTS = 1000
"""Artifacts listed per job; the list travels in workflow history, which must stay small."""
_MAX_NOTES = 5
_MIB = 1 << 20
_PUTS_AT_ONCE = 8


class ArtifactsTooLargeError(Exception):
    """The job's artifacts weigh more, read back, than the sandbox stores (a violation)."""


def walk_files(layout: Layout, max_entries: int) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Every non-directory entry below the workspace except the sandbox's own files.

    Raises:
        TreeLimitError: the tree is deeper or larger than any walk reads.
    """
    excluded = {layout.filename, *layout.inputs}

    def skipped(found: Found) -> bool:
        return (found.depth == 1 and found.rel in RESERVED) or found.rel in excluded

    for found in walk(layout.path, max_entries=max_entries, prune=skipped):
        if not skipped(found) and not found.is_dir():
            yield found.rel, found.entry


def collect_artifacts(layout: Layout, limits: Limits, max_entries: int = 1_000_000
                      ) -> tuple[list[Artifact], list[str]]:
    """The job's artifacts (name, size, sha256, path) and notes on entries left out.

    Sizes are checked before anything is hashed: a sparse file of a terabyte takes a few
    blocks on disk but is a terabyte read back, in the hash and in the store.

    Raises:
        ArtifactsTooLargeError: an artifact or all of them pass ``limits``' bounds.
        TreeLimitError: the tree is deeper or larger than any walk reads.
    """
    regular: list[tuple[str, str, int]] = []
    notes: list[str] = []
    unlisted = 0
    for name, entry in walk_files(layout, max_entries):
        if not _encodable(name):
            notes.append(f"{name.encode('utf-8', 'replace')!r} has a name that is not UTF-8")
        elif entry.is_symlink():
            notes.append(f"symlink {name!r} -> {os.readlink(entry.path)!r} is not an artifact "
                         "(links are never followed)")
        elif not entry.is_file(follow_symlinks=False):
            notes.append(f"{name!r} is not a regular file")
        elif len(regular) >= MAX_ARTIFACTS:
            unlisted += 1
        else:
            regular.append((name, entry.path, entry.stat(follow_symlinks=False).st_size))
    _check_sizes(regular, limits)
    artifacts: list[Artifact] = []
    for name, path, _ in regular:
        try:
            size, digest = hash_file(path)
        except OSError as err:  # e.g. the job made it unreadable: the job's fault, noted
            notes.append(f"{name!r} could not be read ({err.strerror or err})")
            continue
        artifacts.append(Artifact(name=name, size=size, sha256=digest, path=path))
    if unlisted:
        notes.append(f"{unlisted} more files not listed (at most {MAX_ARTIFACTS} artifacts; "
                     "bundle many small files into an archive)")
    return artifacts, _shorten(notes)


def _check_sizes(files: list[tuple[str, str, int]], limits: Limits) -> None:
    """Refuse artifacts whose apparent sizes pass the per-artifact or per-job bound."""
    for name, _, size in files:
        if size > limits.artifact_mb * _MIB:
            raise ArtifactsTooLargeError(f"{name!r} is {size / _MIB:.1f} MiB read back")
    total = sum(size for _, _, size in files)
    if total > limits.artifacts_mb * _MIB:
        raise ArtifactsTooLargeError(f"its {len(files)} files are {total / _MIB:.1f} MiB "
                                     "read back together")


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
