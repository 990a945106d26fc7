"""Finding skill folders and reading their files, within bounds and never through a link.

Everything here treats the disk as hostile: the search for folders is bounded in depth and
entries, a folder's files are counted and sized before any is read, symbolic links are refused
rather than followed, and a file is opened without following links and read no further than
its limit. ``Source`` is what a folder that passed these checks hands to the reader of its kind.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, cast

from activities.common.trees import MAX_DEPTH, Found, TreeLimitError, walk
from skills.folders.errors import Problem
from skills.folders.limits import (
    DOCUMENTS,
    LICENCES,
    MAX_ENTRIES,
    MAX_FILE,
    MAX_FILES,
    MAX_FOLDER,
    MAX_REFERENCE,
    MAX_REFERENCES,
    MAX_SEARCH_DEPTH,
    MAX_SEARCH_ENTRIES,
    REFERENCES,
    SCRIPTS,
    SKILL_FILE,
)
from workflows.contracts.patterns import MAX_REFERENCE_FILES


def is_document(relative: str) -> bool:
    """Whether a folder's file is a text document an agent may open as a reference.

    ``references/`` files and Markdown or text files anywhere else (``reference/``,
    ``shared/``…), but not ``SKILL.md`` itself, scripts, assets or licences (kept as files
    only).
    """
    name = relative.rsplit("/", 1)[-1].lower()
    return (relative != SKILL_FILE and not relative.startswith((f"{SCRIPTS}/", "assets/"))
            and not name.startswith(LICENCES)
            and (relative.startswith(f"{REFERENCES}/") or name.endswith(DOCUMENTS)))


def _is_skill_folder(path: Path) -> bool:
    try:
        return any(name.lower() == SKILL_FILE.lower() for name in os.listdir(path))
    except OSError:
        return False


def discover(directory: Path) -> tuple[list[Path], list[str]]:
    """Skill folders under ``directory`` (breadth first, no links followed)."""
    if directory.is_symlink() or not directory.is_dir():
        what = "is a symbolic link" if directory.is_symlink() else "is not a folder"
        return [], [f"{directory}: {what}; give a skill folder or a folder of skill folders"]
    if _is_skill_folder(directory):
        return [directory], []
    found: list[Path] = []
    problems: list[str] = []

    def unread(rel: str, err: OSError) -> None:
        problems.append(f"{directory / rel}: cannot be read ({err.strerror})")

    def pruned(item: Found) -> bool:
        if item.entry.name.startswith(".") or item.depth >= MAX_SEARCH_DEPTH:
            return True
        if _is_skill_folder(Path(item.entry.path)):
            found.append(Path(item.entry.path))  # a skill folder is not searched further
            return True
        return False

    try:
        for item in walk(directory, max_depth=MAX_SEARCH_DEPTH, max_entries=MAX_SEARCH_ENTRIES,
                         breadth_first=True, prune=pruned, on_error=unread):
            if item.entry.name.startswith("."):
                continue
            if item.entry.is_symlink():
                problems.append(f"{item.entry.path}: is a symbolic link; copy the folder in "
                                "instead")
            elif (item.is_dir() and item.depth == MAX_SEARCH_DEPTH
                  and _is_skill_folder(Path(item.entry.path))):
                found.append(Path(item.entry.path))
    except TreeLimitError:
        return found, [*problems, f"{directory}: more than {MAX_SEARCH_ENTRIES} entries; "
                       "point the import at the skill folders"]
    return found, problems


def scan(folder: Path) -> tuple[dict[str, int], list[str]]:
    """Regular files of ``folder`` (relative path -> size) and what breaks the limits."""
    files: dict[str, int] = {}
    problems: list[str] = []
    try:
        for item in walk(folder, max_entries=MAX_ENTRIES):
            path, entry = Path(item.entry.path), item.entry
            if entry.is_symlink():
                problems.append(f"{path}: is a symbolic link; links are refused, copy the file")
            elif item.is_dir():
                continue
            elif entry.is_file(follow_symlinks=False):
                size = entry.stat(follow_symlinks=False).st_size
                files[item.rel] = size
                if size > MAX_FILE:
                    problems.append(f"{path}: {size} bytes; each file may hold at most "
                                    f"{MAX_FILE} bytes")
            else:
                problems.append(f"{path}: is not a regular file or folder")
    except TreeLimitError as err:
        if err.kind == "depth":
            return files, [*problems, f"{folder}: folders nested more than {MAX_DEPTH} deep; "
                           "a skill folder holds a few flat folders"]
        return files, [*problems, f"{folder}: more than {MAX_ENTRIES} files and folders"
                       f" (at most {MAX_FILES} files are allowed)"]
    if len(files) > MAX_FILES:
        problems.append(f"{folder}: holds {len(files)} files; at most {MAX_FILES} are allowed")
    if sum(files.values()) > MAX_FOLDER:
        problems.append(f"{folder}: holds {sum(files.values())} bytes; at most {MAX_FOLDER}")
    return files, problems


def read_text(path: Path, limit: int) -> str:
    """The UTF-8 text of ``path`` (never through a link), at most ``limit`` bytes."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as err:
        raise Problem(f"cannot be read ({err.strerror})") from err
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise Problem("is not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise Problem(f"is larger than {limit} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise Problem(f"is not UTF-8 text (invalid byte at offset {err.start})") from err


class Source:
    """A validated folder's parts, handed to the reader of its kind."""

    def __init__(self, folder: Path, files: dict[str, int], front: dict[str, Any], body: str
                 ) -> None:
        self.folder = folder
        self.files = files
        self.front = front
        self.body = body
        self.metadata = cast("dict[str, str]", front.get("metadata") or {})
        self.warnings: list[str] = []
        """What the reader took with a conversion or left out, one line each."""

    @property
    def where(self) -> Path:
        """The folder's ``SKILL.md``, for messages."""
        return self.folder / SKILL_FILE

    def script(self, filename: str) -> str:
        """The text of ``scripts/<filename>`` (a plain name, checked by the caller)."""
        relative = f"{SCRIPTS}/{filename}"
        if relative not in self.files:
            raise Problem(f"{self.folder / relative}: missing; the skill's job runs this script")
        try:
            return read_text(self.folder / relative, MAX_FILE)
        except Problem as err:
            raise Problem(f"{self.folder / relative}: {err}") from err

    def references(self) -> dict[str, str]:
        """The text of the folder's documents (:func:`is_document`), within ``limits``.

        A file that is too large, not UTF-8 text, holds a NUL or passes the total is listed
        in ``warnings``: it is kept as a file (``keep``), not as text an agent can open.
        """
        kept: dict[str, str] = {}
        left: list[str] = []
        total = 0
        for relative in sorted(f for f in self.files if is_document(f)):
            size = self.files[relative]
            if (size > MAX_REFERENCE or total + size > MAX_REFERENCES
                    or len(kept) >= MAX_REFERENCE_FILES):
                left.append(relative)
                continue
            try:
                text = read_text(self.folder / relative, MAX_REFERENCE)
            except Problem:
                left.append(relative)
                continue
            if "\0" in text:
                left.append(relative)
                continue
            kept[relative] = text
            total += size
        if left:
            self.warnings.append(
                f"{self.folder}: {len(left)} referenced file(s) kept as files only, not as text an "
                f"agent opens (binary, "
                f"over {MAX_REFERENCE} bytes each or {MAX_REFERENCES} in all, or over "
                f"{MAX_REFERENCE_FILES} files): {', '.join(left[:5])}"
                + (" …" if len(left) > 5 else ""))
        return kept
