"""Parsing a job's Python source: one parse at a time in the whole process, without warnings.

Every reader of a job's source (the reviewers, task kinds, tiering, the debugger's facts,
symbol look-ups) parses it with :func:`parse_python`, from activity threads and workflow
threads alike, for two reasons:

- CPython 3.11 counts the depth of the tree it builds in state every thread shares. A
  collection that runs a finalizer mid-build can hand the interpreter to another thread
  parsing at the same moment, and the first parse then fails with ``SystemError: AST
  constructor recursion depth mismatch`` (seen under a burst of runs). A lock held for the
  parse keeps a second one from starting.
- A source with an invalid escape warns at compile time. That is the job's business: it must
  not reach the worker's log, nor become a ``SyntaxError`` under ``-W error``. Warning
  filters are process-wide too, so they are set under the same lock.
"""

from __future__ import annotations

import ast
import threading
import warnings

_LOCK = threading.Lock()


def parse_python(source: str, filename: str = "<unknown>") -> ast.Module:
    """The tree of ``source``, parsed while no other thread of the process parses.

    Raises:
        SyntaxError: ``source`` is not Python (or holds a null byte).
        ValueError: it holds a null byte (as some Python releases report it).
        RecursionError: it nests deeper than the parser goes.
    """
    with _LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source, filename=filename)
