"""Copies of a run's verified artifacts in its report folder, so the folder holds everything.

Each verified artifact is copied from the worker's work directory to
``<run>/artifacts/<task>/<name>`` and linked from the Markdown: images are embedded, findings
texts (``findings.md``, ``summary.txt``, ``report.md``...) inlined up to
:data:`EXCERPT_BYTES`. An artifact is read only below the work directory and never through a
link (:func:`activities.artifacts.store.open_beneath`), and copied only if its bytes still have
the sha256 the task verified. The copies of a run share a byte budget; what is not copied is
listed, with why, in the report.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Literal

from activities.artifacts.store import NotStoredError, UnsafeEntryError, open_beneath, parts_below
from activities.common.digests import drain
from workflows.contracts.results import KeptArtifact, ReportFiles, TaskResult

ARTIFACTS_FOLDER = "artifacts"
ARTIFACT_BUDGET = 64 * 1024 * 1024
"""Bytes of artifacts copied into one run's folder, all tasks together."""
EXCERPT_BYTES = 4096
"""How much of a findings text the Markdown inlines."""
IMAGES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
"""Raster images the Markdown embeds (an SVG may hold script: it is linked, not embedded)."""
_FINDINGS = re.compile(r"(findings|summary|report|conclusions?|answer)", re.IGNORECASE)
_TEXTS = frozenset({".md", ".txt"})

Kind = Literal["image", "text", "other"]


class _Skip(Exception):  # control flow: this artifact is not copied, and why
    pass


class ArtifactKeeper:
    """Copies the verified artifacts of a run's tasks into its report folder.

    Args:
        work_dir: the work directory the sandbox wrote them in (None: not on this host).
        budget: bytes copied per run at most.
    """

    def __init__(self, work_dir: Path | None, *, budget: int = ARTIFACT_BUDGET) -> None:
        self.work_dir = work_dir.expanduser().resolve() if work_dir is not None else None
        self.budget = budget

    def keep(self, folder: Path, tasks: list[TaskResult]) -> ReportFiles:
        """Copy every listed artifact of ``tasks`` below ``folder``; say what was skipped."""
        files = ReportFiles()
        left = self.budget
        for task in tasks:
            for artifact in task.artifacts:
                where = f"`{task.task_id}`/`{artifact.name}`"
                try:
                    kept = self._copy(folder, task.task_id, artifact.name, artifact.path,
                                      artifact.sha256, left)
                except _Skip as why:
                    files.skipped.append(f"{where}: {why}")
                    continue
                left -= kept.size
                files.artifacts.append(kept)
        return files

    def _copy(self, folder: Path, task_id: str, name: str, path: str, sha256: str,
              left: int) -> KeptArtifact:
        if self.work_dir is None:
            raise _Skip("no work directory on the report writer's host")
        name_parts = PurePosixPath(name).parts
        if not name_parts or any(p in ("", ".", "..", "/") for p in name_parts):
            raise _Skip("its name is not a plain relative path")
        parts = parts_below(self.work_dir, path)
        if parts is None:
            raise _Skip(f"recorded at {path}, outside the work directory; not read")
        target = folder / ARTIFACTS_FOLDER / task_id / Path(*name_parts)
        try:
            fd = open_beneath(self.work_dir, parts)
        except NotStoredError:
            raise _Skip("gone from the work directory (cleaned up, or on another host)") from None
        except UnsafeEntryError as err:
            raise _Skip(f"refused ({err})") from None
        except OSError as err:
            raise _Skip(f"cannot be read ({err.strerror})") from None
        with os.fdopen(fd, "rb") as source:
            size = os.fstat(source.fileno()).st_size
            if size > left:
                raise _Skip(f"{size:,} bytes, over what is left of the report's "
                            f"{self.budget:,}-byte budget for copies")
            target.parent.mkdir(parents=True, exist_ok=True)
            copied, digest = _copy_atomic(source, target)
        if digest != sha256:
            target.unlink(missing_ok=True)
            raise _Skip("its bytes changed after it was verified (checksum mismatch)")
        kind = _kind(name)
        excerpt, truncated = _excerpt(target) if kind == "text" else ("", False)
        return KeptArtifact(task_id=task_id, name=name,
                            path=target.relative_to(folder).as_posix(), size=copied,
                            sha256=digest, kind=kind, excerpt=excerpt, truncated=truncated)


def _copy_atomic(source: BinaryIO, target: Path) -> tuple[int, str]:
    """Copy ``source`` (an open binary file) to a temporary file renamed over ``target``."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            copied, digest = drain(source, out.write)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return copied, digest


def _kind(name: str) -> Kind:
    path = PurePosixPath(name)
    suffix = path.suffix.lower()
    if suffix in IMAGES:
        return "image"
    if suffix in _TEXTS and _FINDINGS.search(path.stem):
        return "text"
    return "other"


def _excerpt(path: Path) -> tuple[str, bool]:
    """The start of a text file, cut at a line end, and whether it was cut."""
    with path.open("rb") as handle:
        head = handle.read(EXCERPT_BYTES + 1)
    if len(head) <= EXCERPT_BYTES:
        return head.decode("utf-8", "replace"), False
    cut = head[:EXCERPT_BYTES]
    line_end = cut.rfind(b"\n")
    if line_end > EXCERPT_BYTES // 2:
        cut = cut[:line_end]
    return cut.decode("utf-8", "ignore"), True
