"""Every workflow patch id is declared once in ``workflows/patches.py`` and used from there.

The source is scanned: a ``workflow.patched`` or ``workflow.deprecate_patch`` call must name a
constant of the registry whose id is in force, no patch id is written anywhere else, and the
registry declares no constant, id or retired id twice.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from tests.test_layout import ROOT, source_files
from workflows import patches

REGISTRY = ROOT / "workflows" / "patches.py"
CALLS = ("patched", "deprecate_patch")


def shown(path: Path) -> str:
    """``path`` relative to the repository when it is in it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def release(version: str) -> tuple[int, ...]:
    """``0.10.0`` -> ``(0, 10, 0)``, so releases compare in order."""
    return tuple(int(part) for part in version.split("."))


def patch_calls(tree: ast.AST) -> list[ast.Call]:
    """The ``workflow.patched(...)`` and ``workflow.deprecate_patch(...)`` calls in ``tree``."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr in CALLS
            and ast.unparse(node.func.value).endswith("workflow")]


def undeclared_uses(files: list[Path]) -> list[str]:
    """Call sites whose argument is not a registry constant of a patch in force, and why."""
    in_force = {p.id: p for p in patches.PATCHES}
    found: list[str] = []
    for path in files:
        for call in patch_calls(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{shown(path)}:{call.lineno}: {ast.unparse(call)}"
            arg = call.args[0] if len(call.args) == 1 and not call.keywords else None
            name = (arg.id if isinstance(arg, ast.Name) else
                    arg.attr if isinstance(arg, ast.Attribute) else None)
            value = getattr(patches, name, None) if name else None
            patch = in_force.get(value) if isinstance(value, str) else None
            if patch is None:
                found.append(f"{where} names no patch of workflows.patches.PATCHES "
                             "(declare it there, use its constant)")
            elif patch.deprecated != (ast.unparse(call.func).endswith("deprecate_patch")):
                found.append(f"{where}: {patch.id} is " + (
                    "deprecated: call workflow.deprecate_patch" if patch.deprecated else
                    "not deprecated: call workflow.patched"))
    return found


def ids_written_elsewhere(files: list[Path]) -> list[str]:
    """``*_PATCH = "..."`` constants outside the registry (ids live in the registry only)."""
    found: list[str] = []
    for path in files:
        if path == REGISTRY:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Assign | ast.AnnAssign):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [f"{shown(path)}:{node.lineno}: {t.id}" for t in targets
                      if isinstance(t, ast.Name) and t.id.endswith("_PATCH")]
    return found


def registry_constants(source: str) -> Counter[str]:
    """How often each module-level name of the registry is assigned."""
    names: Counter[str] = Counter()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def test_every_patch_call_names_a_declared_patch() -> None:
    assert undeclared_uses(source_files()) == []


def test_patch_ids_are_written_only_in_the_registry() -> None:
    assert ids_written_elsewhere(source_files()) == []


def test_no_id_or_constant_is_declared_twice_and_no_retired_id_returns() -> None:
    twice = [n for n, count in registry_constants(REGISTRY.read_text(encoding="utf-8")).items()
             if count > 1]
    assert twice == []
    ids = Counter(p.id for p in (*patches.PATCHES, *patches.RETIRED))
    assert [i for i, count in ids.items() if count > 1] == []
    constants = {v for k, v in vars(patches).items() if k.endswith("_PATCH")}
    assert constants == {p.id for p in patches.PATCHES}, "each constant is a patch in force"


def test_each_patch_says_when_it_arrived_and_what_it_guards() -> None:
    known = {"ResearchWorkflow", "BranchWorkflow", "TaskWorkflow", "StudyWorkflow",
             "SkillLibraryWorkflow", "TaskBatchWorkflow"}
    for patch in (*patches.PATCHES, *patches.RETIRED):
        assert patch.since and patch.what, patch.id
        assert patch.workflows and set(patch.workflows) <= known, patch.id
        assert bool(patch.retired) == (patch in patches.RETIRED), patch.id
    stale = [p.id for p in patches.PATCHES
             if not p.deprecated and release(p.since) < release(patches.RELEASE)]
    assert stale == [], "at a release, the patches of the one before are deprecated"


def test_the_scan_refuses_an_undeclared_id_and_an_id_outside_the_registry(
        tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text('from temporalio import workflow\n'
                      'LOCAL_PATCH = "mine"\n'
                      'def f() -> bool:\n'
                      '    return workflow.patched("mine") or workflow.patched(LOCAL_PATCH)\n')
    uses = undeclared_uses([module])
    assert len(uses) == 2 and all("names no patch" in u for u in uses), uses
    assert ids_written_elsewhere([module]) == [f"{module}:2: LOCAL_PATCH"]
    assert registry_constants('A_PATCH = "a"\nA_PATCH = "b"\n')["A_PATCH"] == 2
