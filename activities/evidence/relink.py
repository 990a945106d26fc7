"""The ``rescan_artifacts`` activity: find evidence a job wrote, just not where it was expected.

A verification retry (phase 6.5) recovers without running the job again when the evidence is
in the working directory under another path or case (``out/results.csv`` or ``Results.CSV``
for ``results.csv``, ``run/metrics.json`` for ``metrics.json``). The search is bounded
(depth, entries), never follows a symbolic link and never leaves the working directory; a
file found exactly once is *copied* to the expected name (the attempt's directory belongs to
the worker again after the run, and a copy cannot point anywhere else later) and put in the
artifact store, where verification reads it. Several candidates are never guessed between.
Runs on the sandbox pool, and finds the working directory only on the host that ran the job
(elsewhere the evidence stays missing, and the task's retry runs the job again).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from activities.artifacts.store import ArtifactStore, StoreError
from activities.common.digests import drain
from activities.common.heartbeat import Heartbeats
from activities.common.trees import Found, TreeLimitError, walk
from activities.sandbox.job import MAX_METRICS_BYTES
from activities.sandbox.jobjson import read_json_object
from activities.sandbox.workspace import RESERVED
from workflows.catalogue import RESCAN_ARTIFACTS
from workflows.contracts.execution import Artifact
from workflows.contracts.reflection import RescanInput, RescanResult

MAX_DEPTH = 4
"""Directories below the working directory a candidate may sit in."""
MAX_ENTRIES = 5000
"""Directory entries looked at, at most, per rescan (by default)."""
METRICS_FILE = "metrics.json"


class Relinker:
    """Rescans working directories below ``work_dir`` (the sandbox's), built from settings.

    Args:
        work_dir: the sandbox's work directory; nothing outside it is ever touched.
        store: where a relinked artifact is put (none: it stays in the work directory only).
        max_entries: directory entries looked at, at most, per rescan.
        heartbeat_every_s: heartbeat interval while it searches and copies.
    """

    def __init__(self, work_dir: Path, store: ArtifactStore | None = None, *,
                 max_entries: int = MAX_ENTRIES, heartbeat_every_s: float = 1.0) -> None:
        self._work_dir = work_dir.expanduser().resolve()
        self._store = store
        self._max_entries = max_entries
        self._beats = Heartbeats(heartbeat_every_s)

    @RESCAN_ARTIFACTS.defn
    async def rescan_artifacts(self, req: RescanInput) -> RescanResult:
        """Look for missing expected artifacts and ``metrics.json`` and link what is found."""
        return await self._beats.in_thread(self.rescan, req)

    def rescan(self, req: RescanInput) -> RescanResult:
        """Blocking body of :meth:`rescan_artifacts`."""
        wanted = _wanted(req)
        result = RescanResult(outcome=req.outcome.model_copy(deep=True))
        if not wanted:
            return result
        workspace, problem = self._workspace(req.outcome.workspace)
        if workspace is None:
            result.still_missing, result.notes = wanted, [problem]
            return result
        skip = {name for name in (req.job.filename, *req.input_names) if name}
        files, notes = _scan(workspace, skip, self._max_entries)
        result.notes.extend(notes)
        taken = set(req.job.expected_artifacts)
        for name in wanted:
            found, why = _pick(name, files, taken)
            if found is None:
                result.still_missing.append(name)
                result.notes.append(why)
            else:
                _link(result, workspace, name, found, self._store)
        return result

    def _workspace(self, recorded: str) -> tuple[Path | None, str]:
        if not recorded or not os.path.isabs(recorded):
            return None, f"the outcome names no working directory ({recorded!r})"
        path = Path(recorded)
        try:
            info = path.lstat()
        except OSError as err:
            return None, f"working directory {recorded} is gone ({err.strerror})"
        if not stat.S_ISDIR(info.st_mode) or os.path.realpath(path) != recorded:
            return None, f"working directory {recorded} is not a plain directory"
        if not path.is_relative_to(self._work_dir) or path == self._work_dir:
            return None, (f"working directory {recorded} is outside the sandbox's work "
                          f"directory {self._work_dir}; refusing to touch it")
        return path, ""


def _wanted(req: RescanInput) -> list[str]:
    """Expected artifacts the outcome lacks, and ``metrics.json`` if metrics are missing."""
    produced = {a.name for a in req.outcome.artifacts}
    wanted = [n for n in req.job.expected_artifacts if n not in produced]
    metrics_missing = any(m not in req.outcome.metrics for m in req.job.expected_metrics)
    if (metrics_missing and METRICS_FILE not in produced and METRICS_FILE not in wanted
            and req.outcome.metrics_error is None):
        wanted.append(METRICS_FILE)
    return wanted


def _scan(root: Path, skip: set[str], budget: int) -> tuple[list[str], list[str]]:
    """Regular files (relative paths) at most MAX_DEPTH directories down; links ignored."""
    files: list[str] = []
    notes: list[str] = []

    def unread(rel: str, err: OSError) -> None:
        notes.append(f"could not read {rel or './'}: {err.strerror}")

    def pruned(found: Found) -> bool:
        return found.depth > MAX_DEPTH or (found.depth == 1 and found.rel in RESERVED)

    # Breadth first: with the entry budget, shallow files are seen before deep ones.
    try:
        for found in walk(root, max_depth=MAX_DEPTH + 1, max_entries=budget,
                          breadth_first=True, prune=pruned, on_error=unread):
            reserved = found.depth == 1 and found.rel in RESERVED
            if not reserved and found.rel not in skip and found.entry.is_file(
                    follow_symlinks=False):
                files.append(found.rel)
    except TreeLimitError:
        notes.append(f"search stopped after {budget} entries")
    return files, notes


def _pick(name: str, files: list[str], taken: set[str]) -> tuple[str | None, str]:
    """The one file to link as ``name``, or ``None`` and why not."""
    if name in files:
        return name, ""  # there but not listed (over the sandbox's artifact limit): in place
    base = name.rsplit("/", 1)[-1].lower()
    found = [f for f in files if f.rsplit("/", 1)[-1].lower() == base and f not in taken]
    exact = [f for f in found if f.lower() == name.lower()]
    if len(exact) == 1:
        return exact[0], ""
    if len(found) == 1:
        return found[0], ""
    if found:
        shown = ", ".join(found[:10]) + (" ..." if len(found) > 10 else "")
        return None, (f"{name!r}: {len(found)} candidates ({shown}); not guessing, write it "
                      "under its expected name")
    return None, (f"{name!r}: no file of that name within {MAX_DEPTH} directories of the "
                  "working directory")


def _link(result: RescanResult, workspace: Path, name: str, found: str,
          store: ArtifactStore | None) -> None:
    try:
        artifact = _copy(workspace, found, name)
        if store is not None:
            store.put(Path(artifact.path))
    except (OSError, StoreError) as err:
        result.still_missing.append(name)
        result.notes.append(f"{name!r}: found {found!r} but could not copy it: {err}")
        return
    result.outcome.artifacts.append(artifact)
    result.relinked[name] = found
    if name == METRICS_FILE:
        metrics, error = read_json_object(workspace / METRICS_FILE, MAX_METRICS_BYTES)
        result.outcome.metrics, result.outcome.metrics_error = metrics, error
        if error:
            result.notes.append(f"relinked {found!r} as {METRICS_FILE} but {error}")


def _copy(workspace: Path, source: str, name: str) -> Artifact:
    """Copy ``source`` to ``name`` inside ``workspace``, following no link on either side."""
    target = workspace / name
    if source != name:
        _make_parents(workspace, name)
        _clear(target)
    src = os.open(workspace / source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(src, "rb") as reader:
        if not stat.S_ISREG(os.fstat(src).st_mode):
            raise OSError(f"{source} is not a regular file")
        if source == name:
            size, digest = drain(reader)
        else:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            with os.fdopen(os.open(target, flags, 0o644), "wb") as writer:
                size, digest = drain(reader, writer.write)
    return Artifact(name=name, size=size, sha256=digest, path=str(target))


def _make_parents(workspace: Path, name: str) -> None:
    current = workspace
    for part in name.split("/")[:-1]:
        current = current / part
        try:
            info = current.lstat()
        except FileNotFoundError:
            current.mkdir(mode=0o755)
            continue
        if not stat.S_ISDIR(info.st_mode):
            raise OSError(f"{current.relative_to(workspace)} is not a directory (or is a link)")


def _clear(target: Path) -> None:
    """Remove a symbolic link squatting on the expected name (never what it points to)."""
    try:
        info = target.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISLNK(info.st_mode):
        raise OSError(f"{target.name} exists and is not a regular file")
    target.unlink()
