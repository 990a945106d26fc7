"""Recording model exchanges to a JSONL file, and answering from such a recording.

A recording lets a run be re-run without network and with identical answers (tests, demos,
reproducing a report). Each line is one request/response exchange, found again by its
request key: the sha256 of the canonical request (model, system prompt, messages, tool
schema) — never the key or headers, so a recording holds no secret and a request made by
another plan simply finds no answer.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from temporalio.exceptions import ApplicationError

from activities.artifacts.store import ArtifactStore, StoreError, StoreUnavailableError
from activities.llm.output import as_object
from workflows.common.canonical import canonical_json
from workflows.contracts.errors import ErrorType
from workflows.contracts.policy import ModelRecording, check_recording_name

FORMAT_VERSION = 1
MAX_OPEN_RECORDINGS = 64
MAX_RECORDING_BYTES = 512 * 1024 * 1024
"""The largest recording a worker fetches from the artifact store."""
_T = TypeVar("_T")
SETTINGS_HINT = ("record a run first (ASSAY_MODEL_RECORD_PATH) or point ASSAY_MODEL_REPLAY_PATH "
                 "at a recording")
POLICY_HINT = ("record a run first (assay run --record FILE) and replay that file "
               "(assay run --replay FILE), which puts it in the artifact store")
RECORDED_FOLDER = "recorded"
"""Where, in the agents worker's recordings folder, runs' named recordings are written."""


def request_key(*, model: str, system: str, messages: list[dict[str, Any]], tool_name: str,
                tool_schema: dict[str, Any], helpers: list[dict[str, Any]] | None = None) -> str:
    """The sha256 that identifies a request in a recording.

    ``helpers`` (the tools offered besides the answer's) count only when there are some, so
    the keys of requests without them are what they always were.
    """
    request: dict[str, Any] = {"model": model, "system": system, "messages": messages,
                               "tool": {"name": tool_name, "input_schema": tool_schema}}
    if helpers:
        request["helpers"] = helpers
    return hashlib.sha256(canonical_json(request).encode()).hexdigest()


class Recorder:
    """Appends exchanges to a JSONL file, one whole line per write, safe across processes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = asyncio.Lock()

    async def append(self, entry: dict[str, Any]) -> None:
        """Append one exchange (a JSON object) as a line."""
        line = (canonical_json({"v": FORMAT_VERSION, **entry}) + "\n").encode()
        async with self._lock:
            await asyncio.to_thread(self._write, line)

    def _write(self, line: bytes) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            # Other workers may record to the same file; a lock keeps lines whole.
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, line)
        finally:
            os.close(fd)


class Replay:
    """Answers requests from a recording; re-reads the file when it changes.

    Args:
        path: the JSONL recording.
        hint: how to make the recording, said when it does not exist.
    """

    def __init__(self, path: Path, *, hint: str = SETTINGS_HINT) -> None:
        self.path = path
        self.hint = hint
        self._stamp: tuple[int, int] | None = None
        self._entries: dict[str, dict[str, Any]] = {}

    def lookup(self, key: str) -> dict[str, Any] | None:
        """The recorded exchange for ``key``, or None if the recording has none."""
        self._load()
        return self._entries.get(key)

    def _load(self) -> None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            raise ApplicationError(
                f"the model recording {self.path} does not exist: {self.hint}",
                type=ErrorType.REPLAY_UNREADABLE, non_retryable=True) from None
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp != self._stamp:
            self._entries = parse_recording(self.path)
            self._stamp = stamp


class Recordings:
    """One ``Recorder`` and one ``Replay`` per path, for recordings named per call.

    A run's policy names its recording; every call of that run finds the same objects, so
    appends share one lock and a replay parses the file once (again only when it changes).
    """

    def __init__(self, limit: int = MAX_OPEN_RECORDINGS) -> None:
        self._limit = limit
        self._recorders: dict[Path, Recorder] = {}
        self._replays: dict[Path, Replay] = {}
        self._fetching: dict[str, asyncio.Lock] = {}

    def recorder(self, path: Path) -> Recorder:
        """The recorder appending to ``path``."""
        return _cached(self._recorders, path, Recorder, self._limit)

    def replay(self, path: Path) -> Replay:
        """The replay answering from ``path``."""
        return _cached(self._replays, path,
                       lambda p: Replay(p, hint=POLICY_HINT), self._limit)

    async def fetched(self, store: ArtifactStore, sha256: str, folder: Path) -> Path:
        """The recording stored under ``sha256``, fetched once into ``folder`` (checked).

        Raises:
            ApplicationError: ``ReplayMiss`` (non-retryable) when the store holds no such
                recording or holds it damaged; a retryable one when the store is unreachable.
        """
        dest = folder / f"{sha256}.jsonl"
        async with self._fetching.setdefault(sha256, asyncio.Lock()):
            if not dest.is_file():
                try:
                    await asyncio.to_thread(_fetch, store, sha256, dest)
                except StoreUnavailableError as err:
                    raise ApplicationError(f"the recording {sha256[:12]}… could not be "
                                           f"fetched from the artifact store: {err}") from err
                except (StoreError, OSError) as err:
                    raise ApplicationError(
                        f"the run's recording {sha256[:12]}… is not usable from the artifact "
                        f"store: {err}; {POLICY_HINT}", type=ErrorType.REPLAY_MISS,
                        non_retryable=True) from err
        return dest


def recorded_path(folder: Path, name: str) -> Path:
    """Where a run's recording named ``name`` is written: ``<folder>/recorded/<name>.jsonl``.

    Raises:
        ValueError: ``name`` is not a plain file name (a separator, ``..``, hidden).
    """
    return folder / RECORDED_FOLDER / f"{check_recording_name(name)}.jsonl"


def refuse_recording(recording: ModelRecording, why: str) -> ApplicationError:
    """The non-retryable error for a run's recording the agents worker will not use."""
    named = f" (path {recording.path[:80]!r})" if recording.path else ""
    return ApplicationError(
        f"the run's model recording{named} is refused: {why}; the agents worker opens no "
        "host path a run names. Record with `assay run --record FILE` (the run names a "
        "recording, written in the agents worker's data directory) and replay with "
        "`assay run --replay FILE` (the run names the recording's sha256 in the artifact "
        "store)", type=ErrorType.RECORDING_REFUSED, non_retryable=True)


def _fetch(store: ArtifactStore, sha256: str, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    store.fetch(sha256, dest, max_bytes=MAX_RECORDING_BYTES)


def _cached(cache: dict[Path, _T], path: Path, make: Callable[[Path], _T], limit: int) -> _T:
    found = cache.get(path)
    if found is None:
        if len(cache) >= limit:
            cache.pop(next(iter(cache)))  # the oldest: runs end, their recordings go quiet
        found = cache[path] = make(path)
    return found


def parse_recording(path: Path) -> dict[str, dict[str, Any]]:
    """Exchanges by request key (the first one wins if a request was recorded twice)."""
    entries: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            entry = _entry(path, number, line)
            entries.setdefault(entry["key"], entry)
    return entries


def _entry(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        entry: Any = json.loads(line)
    except json.JSONDecodeError as err:
        cut = ("" if line.endswith("\n")
               else " (the line is cut off: the recording was interrupted while writing)")
        raise ApplicationError(
            f"the model recording {path} is corrupt at line {number}: {err.msg} at column "
            f"{err.colno}{cut}; delete that line or record again", type=ErrorType.REPLAY_UNREADABLE,
            non_retryable=True) from None
    exchange = as_object(entry)
    if (exchange is None or not isinstance(exchange.get("key"), str)
            or as_object(exchange.get("response")) is None):
        raise ApplicationError(
            f"the model recording {path} is corrupt at line {number}: not an exchange "
            "(an object with \"key\" and \"response\"); delete that line or record again",
            type=ErrorType.REPLAY_UNREADABLE, non_retryable=True)
    return exchange
