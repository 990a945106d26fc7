"""Workflow code reads no clock, randomness, environment, file or network of its own.

The workflow sandbox refuses such calls only in the modules it imports itself: the workflow
classes' own (``workflows/research/workflow.py`` and the like). Everything they import inside
``workflow.unsafe.imports_passed_through()`` (every collaborator, every contract) runs outside
it, unchecked, and a call there that differs on replay would break a run's history only once
it was replayed. So every module under ``workflows/`` is read here and each such call refused,
naming its line; ``workflow.now()``, ``workflow.random()`` and ``workflow.uuid4()`` are the
deterministic ways in.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.test_layout import ROOT, source_files

FORBIDDEN_CALLS = {
    "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
    "datetime.date.today", "time.time", "time.time_ns", "time.monotonic", "time.monotonic_ns",
    "time.perf_counter", "time.perf_counter_ns", "time.process_time", "time.sleep",
    "uuid.uuid1", "uuid.uuid4", "os.getenv", "os.urandom", "os.getpid", "os.listdir",
    "os.scandir", "os.stat", "open", "input",
}
"""Calls whose answer differs between a run and its replay (or that touch the machine)."""
FORBIDDEN_NAMES = {"os.environ", "sys.argv", "sys.stdin"}
"""Attributes whose value is the process's, not the workflow's."""
FORBIDDEN_MODULES = {"random", "secrets", "socket", "subprocess", "multiprocessing", "requests",
                     "httpx", "urllib.request", "http.client", "asyncpg", "sqlalchemy", "psutil",
                     "pathlib", "shutil", "tempfile", "glob"}
"""Modules workflow code has no deterministic use for."""


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """``a.b.c`` of a name or attribute chain, its first name resolved through the imports."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, aliases)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def problems(source: str) -> list[str]:
    """What ``source`` calls or imports that workflow code must not, one line each."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for name in node.names:
                aliases[name.asname or name.name.split(".")[0]] = (
                    name.name if name.asname else name.name.split(".")[0])
                if name.name in FORBIDDEN_MODULES or name.name.split(".")[0] in FORBIDDEN_MODULES:
                    found.append(f"line {node.lineno}: imports {name.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for name in node.names:
                aliases[name.asname or name.name] = f"{node.module}.{name.name}"
            if node.module in FORBIDDEN_MODULES or node.module.split(".")[0] in FORBIDDEN_MODULES:
                found.append(f"line {node.lineno}: imports from {node.module}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func, aliases)
            if name in FORBIDDEN_CALLS:
                found.append(f"line {node.lineno}: calls {name}()")
        elif isinstance(node, ast.Attribute | ast.Name) and isinstance(node.ctx, ast.Load):
            name = _dotted(node, aliases)
            if name in FORBIDDEN_NAMES:
                found.append(f"line {node.lineno}: reads {name}")
    return found


def workflow_modules() -> list[Path]:
    """Every module of workflow code."""
    return [path for path in source_files() if path.relative_to(ROOT).parts[0] == "workflows"]


def test_no_workflow_module_reads_the_clock_randomness_or_the_machine() -> None:
    offending = {str(path.relative_to(ROOT)): found for path in workflow_modules()
                 if (found := problems(path.read_text(encoding="utf-8")))}
    assert offending == {}


@pytest.mark.parametrize(("source", "expected"), [
    ("import datetime\nx = datetime.datetime.now()", "line 2: calls datetime.datetime.now()"),
    ("from datetime import datetime as dt\ndt.utcnow()",
     "line 2: calls datetime.datetime.utcnow()"),
    ("from datetime import date\ndate.today()", "line 2: calls datetime.date.today()"),
    ("import time\ntime.time()", "line 2: calls time.time()"),
    ("from time import perf_counter\nperf_counter()", "line 2: calls time.perf_counter()"),
    ("import uuid\nuuid.uuid4()", "line 2: calls uuid.uuid4()"),
    ("import os\nos.environ['HOME']", "line 2: reads os.environ"),
    ("import os\nos.getenv('HOME')", "line 2: calls os.getenv()"),
    ("from os import environ\nenviron.get('HOME')", "line 2: reads os.environ"),
    ("def f():\n    return open('x').read()", "line 2: calls open()"),
    ("import random", "line 1: imports random"),
    ("from random import choice", "line 1: imports from random"),
    ("import urllib.request", "line 1: imports urllib.request"),
    ("from pathlib import Path", "line 1: imports from pathlib"),
])
def test_each_way_out_is_named_with_its_line(source: str, expected: str) -> None:
    assert expected in problems(source)


@pytest.mark.parametrize("source", [
    "from temporalio import workflow\nworkflow.now()",
    "from temporalio import workflow\nworkflow.uuid4()",
    "from temporalio import workflow\nworkflow.random().random()",
    "from datetime import datetime, timedelta\ndatetime(2026, 1, 1) + timedelta(days=1)",
    "log.open('checkpoint', 'start')",
    "tree.open()",
])
def test_the_deterministic_ways_in_pass(source: str) -> None:
    assert problems(source) == []
