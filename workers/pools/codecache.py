"""Each workflow module compiled once per worker process, however often the sandbox imports it.

Temporal's workflow sandbox imports a workflow's module afresh for every workflow execution it
starts, so that no execution sees another's module state. Importing means compiling the
module's source, unless Python may read a bytecode cache for it: with ``PYTHONDONTWRITEBYTECODE``
set (as container images often set it), on a read-only install or with a stale cache, every
execution compiled its workflow modules again: over half of the cost of starting one
(``make bench`` section 11 prints a workflow's sandbox start without and with this cache).

:class:`CodeCache` keeps the code objects of the project's workflow modules, keyed by file,
modification time and size. Each execution still runs its modules anew in its own sandbox:
only the compiling is shared, and a code object is immutable, so no state is. A file changed
on disk is compiled again.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import CodeType, ModuleType

PACKAGES = ("workflows",)
"""The packages whose modules the sandbox imports for each execution."""


@dataclass
class Counts:
    """How often a module's code was compiled (or read from a bytecode file) and reused."""

    compiled: int = 0
    reused: int = 0


counts = Counts()
_CODE: dict[tuple[str, int, int], CodeType] = {}


class _Loader(importlib.machinery.SourceFileLoader):
    """A source loader that compiles each version of a file once per process."""

    def get_code(self, fullname: str) -> CodeType:
        stat = os.stat(self.path)
        key = (self.path, stat.st_mtime_ns, stat.st_size)
        code = _CODE.get(key)
        if code is None:
            code = super().get_code(fullname)
            assert code is not None  # a source file always has code
            _CODE[key] = code
            counts.compiled += 1
        else:
            counts.reused += 1
        return code


class CodeCache(importlib.abc.MetaPathFinder):
    """Finds the modules of :data:`PACKAGES` as the path finder does, with :class:`_Loader`."""

    def __init__(self, packages: Sequence[str] = PACKAGES) -> None:
        self.packages = tuple(packages)

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """The path finder's spec of a module of :data:`PACKAGES`, loaded by :class:`_Loader`."""
        if not any(fullname == p or fullname.startswith(p + ".") for p in self.packages):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        loader = spec.loader if spec is not None else None
        if spec is None or type(loader) is not importlib.machinery.SourceFileLoader:
            return spec
        spec.loader = _Loader(loader.name, loader.path)
        return spec


def install() -> None:
    """Put the cache first on this process's import path (once)."""
    if not any(isinstance(finder, CodeCache) for finder in sys.meta_path):
        sys.meta_path.insert(0, CodeCache())
