"""Which third-party modules a job's source needs, read from its imports.

Imports guarded by ``try: ... except ImportError`` are optional (the job copes without them),
imports under ``if TYPE_CHECKING:`` never run, relative imports and imports of the job's own
files (inputs ending in ``.py``) need no package, and the standard library is always there.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import PurePosixPath

_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
_DYNAMIC_IMPORTS = frozenset({"__import__", "import_module", "importlib.import_module"})


@dataclass(frozen=True)
class ImportUse:
    """Where a module is first imported, and whether the job can do without it."""

    line: int
    optional: bool


def job_imports(tree: ast.AST, *, local_files: list[str]) -> dict[str, ImportUse]:
    """Top-level third-party modules the source imports, by name."""
    local = {PurePosixPath(f).stem for f in local_files if f.endswith(".py")}
    found: dict[str, ImportUse] = {}
    _walk(tree, optional=False, found=found)
    return {name: use for name, use in found.items()
            if name not in sys.stdlib_module_names and name not in local}


def _walk(node: ast.AST, *, optional: bool, found: dict[str, ImportUse]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Try | ast.TryStar):
            guarded = optional or any(_catches_import_error(h) for h in child.handlers)
            for statement in child.body:
                _walk_one(statement, optional=guarded, found=found)
            for part in (*child.handlers, *child.orelse, *child.finalbody):
                _walk_one(part, optional=optional, found=found)
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for statement in child.orelse:
                _walk_one(statement, optional=optional, found=found)
        else:
            _walk_one(child, optional=optional, found=found)


def _walk_one(node: ast.AST, *, optional: bool, found: dict[str, ImportUse]) -> None:
    for name in _imported(node):
        previous = found.get(name)
        if previous is None or (previous.optional and not optional):
            found[name] = ImportUse(line=getattr(node, "lineno", 0), optional=optional)
    _walk(node, optional=optional, found=found)


def _imported(node: ast.AST) -> list[str]:
    """Top-level module names one node imports."""
    if isinstance(node, ast.Import):
        return [alias.name.split(".")[0] for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module.split(".")[0]]
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else (
            func.attr if isinstance(func, ast.Attribute) else "")
        first = node.args[0]
        if name in _DYNAMIC_IMPORTS and isinstance(first, ast.Constant) and isinstance(
                first.value, str) and first.value and not first.value.startswith("."):
            return [first.value.split(".")[0]]
    return []


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name | ast.Attribute) and
               (n.id if isinstance(n, ast.Name) else n.attr) in _IMPORT_ERRORS for n in names)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
