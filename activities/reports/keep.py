"""Copies of a run's verified artifacts in its report folder, so the folder holds everything.

Each verified artifact is fetched from the artifact store by the sha256 the task verified
(:meth:`activities.artifacts.store.ArtifactStore.fetch`: checked before it is kept, so the
report writer need not share a disk with the sandbox) to ``<run>/artifacts/<task>/<name>``
and linked from the Markdown: images are embedded, findings texts (``findings.md``,
``summary.txt``, ``report.md``...) inlined up to :data:`EXCERPT_BYTES`. The copies of a run
share a byte budget, which bounds each fetch; what is not copied is listed, with why, in the
report.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Literal

from activities.artifacts.store import (
    ArtifactStore,
    DamagedEntryError,
    NotStoredError,
    StoreError,
    StoreUnavailableError,
    TooLargeError,
)
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
        store: the artifact store the sandbox put them in (None: nothing is copied).
        budget: bytes copied per run at most.
    """

    def __init__(self, store: ArtifactStore | None, *, budget: int = ARTIFACT_BUDGET) -> None:
        self.store = store
        self.budget = budget

    def keep(self, folder: Path, tasks: list[TaskResult]) -> ReportFiles:
        """Copy every listed artifact of ``tasks`` below ``folder``; say what was skipped."""
        files = ReportFiles()
        left = self.budget
        for task in tasks:
            for artifact in task.artifacts:
                where = f"`{task.task_id}`/`{artifact.name}`"
                try:
                    kept = self._copy(folder, task.task_id, artifact.name, artifact.sha256, left)
                except _Skip as why:
                    files.skipped.append(f"{where}: {why}")
                    continue
                left -= kept.size
                files.artifacts.append(kept)
        return files

    def _copy(self, folder: Path, task_id: str, name: str, sha256: str,
              left: int) -> KeptArtifact:
        if self.store is None:
            raise _Skip("no artifact store on the report writer's host")
        name_parts = PurePosixPath(name).parts
        if not name_parts or any(p in ("", ".", "..", "/") for p in name_parts):
            raise _Skip("its name is not a plain relative path")
        target = folder / ARTIFACTS_FOLDER / task_id / Path(*name_parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            stored = self.store.fetch(sha256, target, max_bytes=left)
        except NotStoredError:
            raise _Skip("not in the artifact store") from None
        except TooLargeError:
            raise _Skip(f"over what is left of the report's {self.budget:,}-byte budget "
                        "for copies") from None
        except DamagedEntryError:
            raise _Skip("its stored bytes no longer have the verified sha256 (checksum "
                        "mismatch)") from None
        except StoreUnavailableError as err:
            raise _Skip(f"the artifact store could not be reached ({err})") from None
        except (StoreError, OSError) as err:
            raise _Skip(f"refused ({err})") from None
        kind = _kind(name)
        excerpt, truncated = _excerpt(target) if kind == "text" else ("", False)
        return KeptArtifact(task_id=task_id, name=name,
                            path=target.relative_to(folder).as_posix(), size=stored.size,
                            sha256=stored.sha256, kind=kind, excerpt=excerpt,
                            truncated=truncated)


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
