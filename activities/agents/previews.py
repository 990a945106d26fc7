"""The first lines of finished tasks' text artifacts, shown to the agents after them.

The workflow hands an agent digests of finished tasks (``workflows.agents.context``) with
the artifacts' sha256 and paths; the activity reads the first lines of each text artifact
here, when it writes the prompt, so file contents never enter a workflow's history. With an
artifact store (the worker's) the file is taken from it by digest, so the agents pool needs
no disk shared with the sandbox; without one, from its path. A file that is not there, not
text (a NUL byte, not UTF-8) or unreadable is left out. Reads are bounded:
:data:`PREVIEW_BYTES` per file, :data:`PREVIEW_LINES` lines of at most
:data:`PREVIEW_LINE_CHARS` characters, each cut saying so (an S3 store still downloads the
whole object to check its digest first).
"""

from __future__ import annotations

from collections.abc import Iterable

from activities.artifacts.store import ArtifactStore, StoreError
from workflows.agents.context import TaskDigest

PREVIEW_BYTES = 2048
PREVIEW_LINES = 5
PREVIEW_LINE_CHARS = 160
CUT_LINE = " …"
"""Ends a line cut to :data:`PREVIEW_LINE_CHARS`."""
CUT_REST = "[… the rest of the file is not shown]"
"""Ends a preview of a file longer than its first lines."""
UTF8_LONGEST = 4
"""Bytes of the longest UTF-8 character: a read may end inside one."""

Previews = dict[tuple[str, str], str]
"""First lines by (task id, artifact name)."""


def stored_lines(store: ArtifactStore, sha256: str) -> str | None:
    """The first lines of the stored text file ``sha256``; None when it is not that."""
    try:
        with store.open(sha256) as handle:
            chunk = handle.read(PREVIEW_BYTES)
    except (StoreError, OSError):
        return None
    return _text(chunk)


def _text(chunk: bytes) -> str | None:
    if b"\0" in chunk:
        return None
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError as err:
        if len(chunk) < PREVIEW_BYTES or err.start < len(chunk) - UTF8_LONGEST:
            return None
        text = chunk[:err.start].decode("utf-8")
    lines = text.splitlines()
    shown = [line if len(line) <= PREVIEW_LINE_CHARS else line[:PREVIEW_LINE_CHARS] + CUT_LINE
             for line in lines[:PREVIEW_LINES]]
    if len(lines) > PREVIEW_LINES or len(chunk) >= PREVIEW_BYTES:
        shown.append(CUT_REST)
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
