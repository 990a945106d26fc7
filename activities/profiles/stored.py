"""Profiles of the goal's data files, read from the artifact store by digest and cached.

The agents worker builds a file's profile the first time a prompt needs it and keeps the
text by (digest, name, bound): a profile is a pure function of those, so every later role
of every run on the same data gets the same bytes without reading the file again. A file
the store does not hold (or cannot hand out) gets no profile; its name, size and first
lines still reach the prompt.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Protocol

from activities.artifacts.store import ArtifactStore, StoreError
from activities.profiles.columns import PROFILE_BYTES
from activities.profiles.formats import profile_of
from activities.profiles.tables import SCAN_BYTES

Profiles = dict[str, str]
"""Profile texts by data file name."""
CACHED = 128
"""Profiles a worker keeps (the least recently used go first)."""


class DataRef(Protocol):
    """A data file as requests name it: its name, digest and size."""

    name: str
    sha256: str
    size: int


class DataProfiles:
    """Data profiles from one artifact store, bounded to ``max_bytes`` each and cached."""

    def __init__(self, store: ArtifactStore | None, *, max_bytes: int = PROFILE_BYTES,
                 scan_bytes: int = SCAN_BYTES) -> None:
        self.store = store
        self.max_bytes = max_bytes
        self.scan_bytes = scan_bytes
        self._cache: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, files: Iterable[DataRef]) -> Profiles:
        """The profile of each file the store holds, by file name."""
        found: Profiles = {}
        for ref in files:
            text = self.one(ref)
            if text is not None:
                found[ref.name] = text
        return found

    def one(self, ref: DataRef) -> str | None:
        """One file's profile (cached), or None when the store cannot hand it out."""
        if self.store is None:
            return None
        key = (ref.sha256, ref.name)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        try:
            with self.store.open(ref.sha256) as handle:
                text = profile_of(handle, ref.name, ref.size, max_bytes=self.max_bytes,
                                  scan_bytes=self.scan_bytes)
        except (StoreError, OSError):
            return None
        with self._lock:
            self._cache[key] = text
            while len(self._cache) > CACHED:
                self._cache.popitem(last=False)
        return text
