"""The first lines of finished tasks' text artifacts, shown to the agents after them.

The workflow hands an agent digests of finished tasks (``workflows.contracts.context``) with
the artifacts' sha256 and paths; the activity reads the first lines of each text artifact
here, when it writes the prompt, so file contents never enter a workflow's history. With an
artifact store (the worker's) the file is taken from it by digest, so the agents pool needs
no disk shared with the sandbox; without one, from its path. A file that is not there, not
text (a NUL byte, not UTF-8) or unreadable is left out. Reads are bounded:
:data:`PREVIEW_BYTES` per file, :data:`PREVIEW_LINES` lines of at most
:data:`PREVIEW_LINE_CHARS` characters, each cut saying so (an S3 store still downloads the
whole object to check its digest first). Whatever a preview leaves out it says, and how much:
its last line counts the lines shown and the bytes of the file not shown.
"""

from __future__ import annotations

from collections.abc import Iterable

from activities.artifacts.store import ArtifactStore, StoreError
from activities.reports.reading import read_report
from workflows.contracts.context import TaskDigest
from workflows.contracts.execution import DependencyArtifact
from workflows.contracts.plan import cycle_ref
from workflows.contracts.study import StudyContext

PREVIEW_BYTES = 2048
PREVIEW_LINES = 5
PREVIEW_LINE_CHARS = 160
CUT_LINE = " …"
"""Ends a line cut to :data:`PREVIEW_LINE_CHARS`."""
CUT_REST = "[… {shown}; the other {left:,} of its {size:,} bytes are not shown]"
"""Ends a preview that leaves part of its file out (see :func:`cut_note`)."""
UTF8_LONGEST = 4
"""Bytes of the longest UTF-8 character: a read may end inside one."""

Previews = dict[tuple[str, str], str]
"""First lines by (task id, artifact name)."""
Reused = dict[str, list[tuple[str, str | None]]]
"""An earlier cycle's task (``c1.data``): each verified artifact's name and first lines
(None: not a text file, or not readable here)."""


def stored_lines(store: ArtifactStore, sha256: str) -> str | None:
    """The first lines of the stored text file ``sha256``; None when it is not that."""
    try:
        with store.open(sha256) as handle:
            chunk = handle.read(PREVIEW_BYTES)
            size = handle.seek(0, 2)
    except (StoreError, OSError):
        return None
    return _text(chunk, size)


def cut_note(lines: int, shown_bytes: int, size: int) -> str:
    """The last line of a preview that shows ``shown_bytes`` of a ``size``-byte file."""
    shown = f"first {lines} line{'' if lines == 1 else 's'} shown"
    return CUT_REST.format(shown=shown, left=size - shown_bytes, size=size)


def _line(line: str) -> tuple[str, int]:
    """A line as shown (cut to :data:`PREVIEW_LINE_CHARS`) and the file's bytes it shows."""
    body = line.splitlines()[0]
    if len(body) > PREVIEW_LINE_CHARS:
        kept = body[:PREVIEW_LINE_CHARS]
        return kept + CUT_LINE, len(kept.encode())
    return body, len(line.encode())


def _text(chunk: bytes, size: int) -> str | None:
    if b"\0" in chunk:
        return None
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError as err:
        if len(chunk) < PREVIEW_BYTES or err.start < len(chunk) - UTF8_LONGEST:
            return None
        text = chunk[:err.start].decode("utf-8")
    lines = [_line(line) for line in text.splitlines(keepends=True)[:PREVIEW_LINES]]
    shown = [line for line, _ in lines]
    shown_bytes = sum(count for _, count in lines)
    if shown_bytes < size:
        shown.append(cut_note(len(shown), shown_bytes, size))
    return "\n".join(shown)


def previews(digests: Iterable[TaskDigest], store: ArtifactStore | None = None) -> Previews:
    """The first lines of every text artifact the digests name (by task id and name)."""
    found: Previews = {}
    for digest in digests:
        for ref in digest.files:
            # by digest only: ``ref.path`` is the sandbox host's, and any client may set it
            text = stored_lines(store, ref.sha256) if store is not None else None
            if text:
                found[(ref.task_id, ref.name)] = text
    return found


def artifact_previews(artifacts: Iterable[DependencyArtifact],
                      store: ArtifactStore | None = None) -> Previews:
    """The first lines of every text artifact given (an earlier cycle's reused ones)."""
    found: Previews = {}
    for ref in artifacts:
        text = stored_lines(store, ref.sha256) if store is not None else None
        if text:
            found[(ref.task_id, ref.name)] = text
    return found


def reusable_previews(study: StudyContext, store: ArtifactStore | None = None) -> Reused:
    """Each reusable earlier task's verified artifacts with their first lines.

    Read from the cycles' reports (this host's disk, else the store); a task whose report
    cannot be read here is left out, and its line in the prompt shows its action only.
    """
    reports = {s.cycle: read_report(s.results_json, s.results_sha256, store)
               for s in study.previous if s.results_json}
    found: Reused = {}
    for ref in study.reusable():
        cycle, task_id = cycle_ref(ref)
        report = reports.get(cycle)
        task = next((t for t in report.tasks if t.task_id == task_id), None) if report else None
        if task is not None:
            found[ref] = [(a.name, stored_lines(store, a.sha256) if store is not None else None)
                          for a in task.artifacts]
    return found
