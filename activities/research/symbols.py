"""Documentation of installed Python code, read from its source files without importing it.

A dotted name (``statistics.median``, ``numpy.polyfit``) is found on disk the way the import
system would find it: the top-level package through the path finders (which import nothing),
then submodules as files below it, then the rest of the name inside the module's syntax tree,
following the module's own ``from ... import`` re-exports a few steps deep. Nothing is
imported, so no package's import-time code runs on the agents worker for a lookup; a name
that exists only in compiled code is "not found" with that said.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

from workflows.contracts.pysource import parse_python

MAX_FOLLOWS = 6
"""Re-exports followed from one module to the next before a lookup gives up."""
MAX_SOURCE_BYTES = 4 * 1024 * 1024
"""A module file larger than this is not parsed."""
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


class NotFound(LookupError):
    """The name is not found in installed source; the message says how far it got."""


@dataclass(frozen=True)
class Found:
    """Where a name is defined: the module file, its text, and the node (None: the module)."""

    name: str
    path: Path
    text: str
    node: Definition | None
    tree: ast.Module

    def summary(self) -> str:
        """The signature and docstring (a module's docstring and its public names)."""
        if self.node is None:
            doc = ast.get_docstring(self.tree) or "(no docstring)"
            names = [n.name for n in self.tree.body
                     if isinstance(n, Definition) and not n.name.startswith("_")]
            listed = ", ".join(names[:80]) + (" …" if len(names) > 80 else "")
            return f"module {self.name}\n\n{doc}\n\nDefines: {listed or '(nothing public)'}"
        short = self.name.rsplit(".", 1)[-1]
        doc = ast.get_docstring(self.node) or "(no docstring)"
        return f"{self.name}:\n\n{signature(self.node, short)}\n\n{doc}"

    def source(self) -> str:
        """The source of the definition (the whole module's for a module)."""
        if self.node is None:
            return self.text
        return ast.get_source_segment(self.text, self.node, padded=True) or ""


def signature(node: Definition, name: str) -> str:
    """``def name(args) -> returns`` or ``class name(bases)``, as written in the source."""
    if isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(b) for b in [*node.bases, *node.keywords])
        init = next((n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                     and n.name == "__init__"), None)
        head = f"class {name}({bases})" if bases else f"class {name}"
        return head + (f"\n    {signature(init, '__init__')}" if init is not None else "")
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"{prefix} {name}({ast.unparse(node.args)}){returns}"


def find(name: str) -> Found:
    """Where the installed ``name`` is defined.

    Raises:
        NotFound: the name is malformed, its package is not installed, or no source defines it.
    """
    if not NAME.match(name):
        raise NotFound(f"{name[:100]!r} is not a dotted Python name (like statistics.median)")
    parts = name.split(".")
    module, path, rest = _module_file(parts)
    return _inside(module, path, rest, name, follows=MAX_FOLLOWS)


def _module_file(parts: list[str]) -> tuple[str, Path, list[str]]:
    """The longest leading module of ``parts`` that has a source file, and what is left."""
    top = parts[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise NotFound(f"no installed module or package is called {top!r}")
    path = _source_of(spec)
    if path is None:
        raise NotFound(f"{top!r} is installed without Python source (built in or compiled)")
    done = 1
    for part in parts[1:]:
        nxt = _submodule(path, part)
        if nxt is None:
            break
        path, done = nxt, done + 1
    return ".".join(parts[:done]), path, parts[done:]


def _source_of(spec: importlib.machinery.ModuleSpec) -> Path | None:
    origin = spec.origin
    if origin and origin.endswith(".py"):
        return Path(origin)
    for where in spec.submodule_search_locations or []:
        init = Path(where) / "__init__.py"
        if init.is_file():
            return init
    return None


def _submodule(path: Path, part: str) -> Path | None:
    """The file of submodule ``part`` of the package whose ``__init__.py`` is ``path``."""
    if path.name != "__init__.py":
        return None
    for candidate in (path.parent / f"{part}.py", path.parent / part / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _parse(path: Path) -> tuple[str, ast.Module]:
    if path.stat().st_size > MAX_SOURCE_BYTES:
        raise NotFound(f"{path.name} is over {MAX_SOURCE_BYTES} bytes; not read")
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        return text, parse_python(text, filename=str(path))
    except (SyntaxError, ValueError, RecursionError) as err:
        raise NotFound(f"{path.name} cannot be parsed ({err})") from None


def _inside(module: str, path: Path, rest: list[str], name: str, *, follows: int) -> Found:
    text, tree = _parse(path)
    if not rest:
        return Found(name, path, text, None, tree)
    node = _defined(tree.body, rest[0])
    if node is not None:
        for part in rest[1:]:
            inner = _defined(node.body, part) if isinstance(node, ast.ClassDef) else None
            if inner is None:
                raise NotFound(f"{module}.{rest[0]} has no attribute {part!r} in its source")
            node = inner
        return Found(name, path, text, node, tree)
    if follows > 0:
        for target in _reexports(tree, module, path, rest[0]):
            try:
                where, where_path, left = _module_file(target.split("."))
            except NotFound:
                continue
            try:
                return _inside(where, where_path, [*left, *rest[1:]], name, follows=follows - 1)
            except NotFound:
                continue
    raise NotFound(f"{name} is not defined in the source of {module} (it may be compiled "
                   "code, or set at run time)")


def _defined(body: list[ast.stmt], name: str) -> Definition | None:
    """The definition of ``name`` in ``body``, looking into ``if``/``try`` blocks too."""
    for node in body:
        if isinstance(node, Definition) and node.name == name:
            return node
        if isinstance(node, ast.If | ast.Try):
            blocks = [node.body, node.orelse, *([node.finalbody] if isinstance(node, ast.Try)
                                                else [])]
            for block in blocks:
                found = _defined(block, name)
                if found is not None:
                    return found
    return None


def _reexports(tree: ast.Module, module: str, path: Path, name: str) -> list[str]:
    """Dotted names ``name`` may come from: ``from X import name`` (or ``*``) in the module."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[str] = []
    stars: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        source = _absolute(node, package)
        if source is None:
            continue
        for alias in node.names:
            if alias.name == "*":
                stars.append(f"{source}.{name}")
            elif (alias.asname or alias.name) == name:
                found.append(f"{source}.{alias.name}")
    return found + stars


def _absolute(node: ast.ImportFrom, package: str) -> str | None:
    """The absolute module an ``ImportFrom`` reads, or None if it climbs above the top."""
    if not node.level:
        return node.module
    parts = package.split(".") if package else []
    if node.level - 1 > len(parts) - 1:
        return None
    base = parts[:len(parts) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])]) or None
