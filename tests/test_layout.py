"""The house rules of the source tree, checked so they stay true as code is added.

Capability packages each say what lives in them, modules stay small, workflow code never
reaches activities, workers, skills, the client or the database, no import cycle crosses
packages (one would fail or not depending on which module a process happens to import first),
and the tests mirror the source.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("activities", "workflows", "client", "database", "workers", "skills")
MAX_LINES = 400


def source_files() -> list[Path]:
    """Every Python module of Assay's own source (the built-in skills' job scripts aside)."""
    return sorted(p for top in SOURCES for p in (ROOT / top).rglob("*.py")
                  if "data" not in p.relative_to(ROOT).parts)


def packages() -> list[Path]:
    """Every package directory of the source."""
    return sorted({p.parent for p in source_files() if (p.parent / "__init__.py").exists()})


def module_name(path: Path) -> str:
    """``activities/sandbox/job.py`` -> ``activities.sandbox.job``."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_module_is_over_the_line_limit() -> None:
    long = {str(p.relative_to(ROOT)): n for p in source_files()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_every_package_says_what_lives_in_it() -> None:
    silent: list[str] = []
    for package in packages():
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8")))
        if not doc or len(doc) < 40:
            silent.append(str(package.relative_to(ROOT)))
    assert silent == []


OUTSIDE_WORKFLOWS = {"activities", "workers", "skills", "client", "database"}
"""What workflow code never imports: each does I/O, or loads what a workflow sandbox refuses."""


def test_workflow_code_never_imports_activities_workers_or_skills() -> None:
    reached: list[str] = []
    for path in (ROOT / "workflows").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            reached += [f"{path.relative_to(ROOT)}: {n}" for n in names
                        if n.split(".")[0] in OUTSIDE_WORKFLOWS]
    assert reached == []


def test_contracts_are_a_leaf() -> None:
    """Every workflows package may import the contracts, so they import none of them back."""
    reached: list[str] = []
    for path in (ROOT / "workflows" / "contracts").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            reached += [f"{path.relative_to(ROOT)}: {n}" for n in names
                        if n.split(".")[0] == "workflows" and n.split(".")[:2] != CONTRACTS]
    assert reached == []


CONTRACTS = ["workflows", "contracts"]


def test_nothing_but_the_cli_imports_the_cli() -> None:
    """The CLI is the top of the tree: what it uses (evaluation, intake, the stack) never
    reaches back into it, even from inside a function, so each can run without it."""
    reached: list[str] = []
    for path in source_files():
        if path.relative_to(ROOT).parts[:2] == ("workers", "cli"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            reached += [f"{path.relative_to(ROOT)}: {n}" for n in names
                        if n.split(".")[:2] == ["workers", "cli"]]
    assert reached == []


def top_level_imports(tree: ast.Module) -> list[str]:
    """Modules a module imports when it loads (not inside functions, not for type checking)."""
    found: list[str] = []
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            stack += node.body + node.orelse
        elif isinstance(node, ast.With | ast.Try):
            stack += node.body + getattr(node, "handlers", []) + getattr(node, "orelse", [])
        elif isinstance(node, ast.ExceptHandler):
            stack += node.body
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the Assay modules (and their packages) loading it loads first."""
    modules = {module_name(p): p for p in source_files() if p.name != "__main__.py"}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for target in top_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
            parts = target.split(".")
            edges.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        parents = name.split(".")
        edges.update(".".join(parents[:i]) for i in range(1, len(parents)))
        graph[name] = {e for e in edges if e in modules and e != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        on_stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: list[str] = []
            while (member := on_stack.pop()) != node:
                group.append(member)
            group.append(node)
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    """A cycle, through a module or a package's ``__init__``, fails depending on import order.

    The one cycle allowed is a package whose ``__init__`` re-exports its own modules: a
    module of it that imports a sibling loads the package first, which is harmless as long as
    the cycle stays inside the package.
    """
    crossing = [group for group in cycles(import_graph())
                if len({".".join(m.split(".")[:2]) for m in group}) > 1]
    assert crossing == []


def package_of(module: str) -> str:
    """The capability package a module belongs to: ``workflows.common.events`` ->
    ``workflows.common``; a module at the top of a source package is its own
    (``workflows.catalogue``)."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, dict[str, set[str]]]:
    """Package -> the other packages it loads, each with the module imports that make it so."""
    packages: dict[str, dict[str, set[str]]] = {package_of(m): {} for m in graph}
    for module, targets in graph.items():
        for target in targets:  # the top packages (``workflows``) only say what lives there
            if "." in target and (here := package_of(module)) != (there := package_of(target)):
                packages[here].setdefault(there, set()).add(f"{module} -> {target}")
    return packages


def test_no_package_import_cycles() -> None:
    """Packages layer: if one loads another, the other never loads it back, by any module.

    Module-level cycles are caught above; this catches two packages that each import the
    other through different modules (``contracts`` using ``agents`` models while ``agents``
    uses contracts), which load fine today and turn into a module cycle with the next import.
    """
    packages = package_graph(import_graph())
    crossing = cycles({p: set(targets) for p, targets in packages.items()})
    because = [f"{a} -> {b}: {max(sorted(packages[a][b]), key=len)}"
               for group in crossing for a in group for b in group if b in packages[a]]
    assert crossing == [], "\n".join(because)


@pytest.mark.parametrize("top", ["activities", "workflows", "workers"])
def test_tests_mirror_the_capability_packages(top: str) -> None:
    missing = [str(p.relative_to(ROOT)) for p in sorted((ROOT / top).iterdir())
               if (p / "__init__.py").exists()
               and not (ROOT / "tests" / p.relative_to(ROOT) / "__init__.py").exists()]
    assert missing == []


def test_error_types_come_from_the_enumeration() -> None:
    """``ApplicationError(type=...)`` names an ``ErrorType``, never a string of its own.

    Retry policies derive their non-retryable list from ``ErrorType``: a type spelled as a
    string elsewhere could be missing from it, and be retried (and re-spend) for ever.
    """
    literal: list[str] = []
    for path in source_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("ApplicationError")
                    and any(k.arg == "type" and isinstance(k.value, ast.Constant)
                            for k in node.keywords)):
                literal.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert literal == []
