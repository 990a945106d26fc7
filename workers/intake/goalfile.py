"""Turning a research goal and its data files into a validated ResearchInput.

A goal run has no plan yet: the run plans it (or waits for a person's plan). Everything that
can be wrong with the goal text or the data files is found here, before anything starts.
Data files are fixed by checksum and carry their first characters, so the planner sees what
the data looks like and the run's identity covers exactly the data it was given; given an
artifact store, each is put there, where the sandbox takes it from by that checksum.
"""

from __future__ import annotations

import codecs
import hashlib
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workflows.common.answer_format import AnswerFormatError, format_names
from workflows.common.canonical import canonical_json
from workflows.constants import digest
from workflows.contracts.policy import Queues, RunPolicy
from workflows.contracts.results import ResearchInput
from workflows.contracts.roles import DATA_HEAD_CHARS, MAX_GOAL_CHARS, DataFile
from workflows.contracts.words import slug

if TYPE_CHECKING:
    from activities.artifacts.store import ArtifactStore

MAX_DATA_BYTES = 50_000_000
MAX_DATA_FILES = 50
MAX_NAME_CHARS = 40
_CHUNK = 1 << 20
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


class GoalError(ValueError):
    """The goal or a data file cannot be run; the message says what, where and how to fix it."""


def is_plan_target(target: str) -> bool:
    """Whether ``assay run TARGET`` names a plan file rather than a goal in words."""
    return target.endswith(".json") or _probe(target, Path.is_file)


def is_directory(target: str) -> bool:
    """Whether ``target`` names an existing directory (neither a plan file nor a goal)."""
    return bool(target.strip()) and _probe(target, Path.is_dir)


def _probe(target: str, test: Callable[[Path], bool]) -> bool:
    """A ``Path`` test that treats names no file can have (too long, NUL bytes) as absent."""
    if not target or "\x00" in target:
        return False
    try:
        return test(Path(target))
    except (OSError, ValueError):
        return False


def check_goal(text: str) -> str:
    """The goal stripped of surrounding whitespace, or GoalError saying what is wrong."""
    goal = text.strip()
    if not goal:
        raise GoalError("the research goal is empty; say in words what to find out, or pass a "
                        "plan file (.json)")
    if len(goal) > MAX_GOAL_CHARS:
        raise GoalError(f"the research goal is {len(goal):,} characters, over the "
                        f"{MAX_GOAL_CHARS:,}-character limit; shorten it, or write a plan file")
    for index, char in enumerate(goal):
        problem = _bad_char(char)
        if problem:
            raise GoalError(f"the research goal contains {problem} at character {index + 1}; "
                            "only printable text, newlines and tabs are allowed")
    return goal


def check_format(answer_format: str) -> str:
    """An answer format with at least one ``@name[...]`` field, stripped, or GoalError."""
    text = answer_format.strip()
    try:
        format_names(text)
    except AnswerFormatError as err:
        raise GoalError(f"--answer-format: {err}") from None
    for index, char in enumerate(text):
        if problem := _bad_char(char):
            raise GoalError(f"the answer format contains {problem} at character {index + 1}")
    return text


def _bad_char(char: str) -> str:
    """What is wrong with one character of a goal or a file name (empty: nothing)."""
    if char in "\n\t":
        return ""
    category = unicodedata.category(char)
    if category == "Cc":
        return f"a control character (U+{ord(char):04X})"
    if category == "Cs":
        return "bytes that are not valid UTF-8"
    if char in _BIDI_CONTROLS:
        return f"a bidirectional-text control (U+{ord(char):04X})"
    return ""


def goal_name(goal: str) -> str:
    """``goal-`` and the first words of the goal as a slug, at most 40 characters in all."""
    name = slug(goal, limit=MAX_NAME_CHARS - len("goal-"), empty="")
    return f"goal-{name}" if name else "goal"


def goal_digest(goal: str, data: list[DataFile]) -> str:
    """Identity of a goal run: the goal text and the names and checksums of its data."""
    files = sorted([f.name, f.sha256] for f in data)
    return digest(canonical_json({"goal": goal, "data": files}, spaced=True).encode())


def load_goal(text: str, data: list[Path], *, max_bytes: int, policy: RunPolicy | None = None,
              queues: Queues | None = None, store: ArtifactStore | None = None,
              answer_format: str | None = None) -> ResearchInput:
    """Validate a goal and its data files into a workflow input (no plan yet).

    ``store`` receives every data file, so that the sandbox can take it; without one the
    files are only checked and pinned (a run of the result cannot read them). An
    ``answer_format`` (``@name[...]`` fields) is added to the goal's words, so every role
    reads it, and kept for the output processor's formatted answer.
    """
    if answer_format is not None:
        answer_format = check_format(answer_format)
        text = f"{text.strip()}\n\nAnswer format: {answer_format}"
    goal = check_goal(text)
    files = read_data(data)
    if store is not None:
        for path, item in zip(data, files, strict=True):
            _put(store, path, item)
    req = ResearchInput(run_id="", plan_name=goal_name(goal),
                        plan_sha256=goal_digest(goal, files), goal=goal, data=files,
                        answer_format=answer_format,
                        policy=policy or RunPolicy(), queues=queues or Queues())
    size = len(req.model_dump_json().encode())
    if size > max_bytes:
        raise GoalError(f"the goal and its data summaries are {size:,} bytes, over the "
                        f"{max_bytes:,}-byte limit for a run's input; pass fewer data files")
    return req


def read_data(paths: list[Path]) -> list[DataFile]:
    """Every ``--data`` file, checked and fixed by checksum; names must be unique."""
    if len(paths) > MAX_DATA_FILES:
        raise GoalError(f"{len(paths)} data files given; at most {MAX_DATA_FILES} are allowed")
    seen: dict[str, Path] = {}
    for path in paths:
        if path.name in seen:
            raise GoalError(f"--data {path}: another data file is also named {path.name!r} "
                            f"({seen[path.name]}); data files appear under their file names, "
                            "so give each a distinct name")
        seen[path.name] = path
    return [read_data_file(path) for path in paths]


@dataclass
class _Reading:
    """While the bytes decode as UTF-8 text: the first characters."""

    head: str = ""
    text: bool = True


def read_data_file(path: Path) -> DataFile:
    """One data file as a DataFile, or GoalError naming the file and what is wrong."""
    name = path.name
    _check_file(path, name)
    sha = hashlib.sha256()
    reading = _Reading()
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    size = 0
    try:
        with path.open("rb") as handle:
            # Read at most one byte past the limit: a file growing meanwhile is still refused.
            while size <= MAX_DATA_BYTES and (chunk := handle.read(_CHUNK)):
                size += len(chunk)
                sha.update(chunk)
                _decode(reading, decoder, chunk, final=False)
            _decode(reading, decoder, b"", final=True)
    except OSError as err:
        raise GoalError(f"--data {path}: cannot read it ({err.strerror})") from err
    if size > MAX_DATA_BYTES:
        raise GoalError(f"--data {path}: over the {MAX_DATA_BYTES:,}-byte limit for a data "
                        "file (it grew while being read)")
    return DataFile(name=name, path=str(path.resolve()), sha256=sha.hexdigest(),
                    size=size, head=reading.head if reading.text else "")


def _put(store: ArtifactStore, path: Path, item: DataFile) -> None:
    """Put a checked data file in the store; it must still be what was checked."""
    from activities.artifacts.store import StoreError  # the CLI needs it only with --data

    try:
        stored = store.put(path)
    except StoreError as err:
        raise GoalError(f"--data {path}: cannot store it: {err}") from err
    except OSError as err:
        where = f" at {err.filename}" if err.filename and str(err.filename) != str(path) else ""
        raise GoalError(f"--data {path}: cannot store it in the artifact store "
                        f"({err.strerror}{where}); the store (ASSAY_STORE_PATH, default "
                        "<data dir>/store) must be writable") from err
    if stored.sha256 != item.sha256:
        raise GoalError(f"--data {path}: the file changed while it was read; run again once "
                        "it has stopped changing")


def _check_file(path: Path, name: str) -> None:
    where = f"--data {path}"
    target = str(path)
    if not _probe(target, Path.exists) and not _probe(target, Path.is_symlink):
        raise GoalError(f"{where}: no such file")
    if _probe(target, Path.is_dir):
        raise GoalError(f"{where}: is a directory; pass each data file on its own --data")
    if not _probe(target, Path.is_file):
        raise GoalError(f"{where}: not a regular file (a broken link, a device or a pipe)")
    problem = _name_problem(name)
    if problem:
        raise GoalError(f"{where}: the file name contains {problem}; rename the file")
    try:
        size = path.stat().st_size
    except OSError as err:
        raise GoalError(f"{where}: cannot read it ({err.strerror})") from err
    if size > MAX_DATA_BYTES:
        raise GoalError(f"{where}: {size:,} bytes is over the {MAX_DATA_BYTES:,}-byte limit "
                        "for a data file")


def _name_problem(name: str) -> str:
    for char in name:
        if char in "\n\t":
            return "a tab or newline"
        problem = _bad_char(char)
        if problem:
            return problem
    return ""


def _decode(reading: _Reading, decoder: codecs.IncrementalDecoder, chunk: bytes, *,
            final: bool) -> None:
    """Feed the UTF-8 check; keep the first characters while the file is still text."""
    if not reading.text:
        return
    try:
        text = decoder.decode(chunk, final=final)
    except UnicodeDecodeError:
        reading.text = False
        return
    if "\x00" in text:  # valid UTF-8, but binary data all the same
        reading.text = False
        return
    if len(reading.head) < DATA_HEAD_CHARS:
        reading.head += text[:DATA_HEAD_CHARS - len(reading.head)]
