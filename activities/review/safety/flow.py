"""A small, deliberately simple dataflow over a job's source, for the safety review.

It answers three questions about an expression: which fully qualified name it calls (import
aliases resolved), what constant integer it is (evaluated safely, saturating instead of
computing ``10**10**10``), where a path expression points, and whether its value was read from
a file or the network. Local names are followed through their latest assignment in source
order, within the enclosing function and then the module. Branches and loops are not
modelled: this is a reviewer's reading, not a proof.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from activities.review.safety.rules import (
    NETWORK_CALLS,
    NETWORK_MODULES,
    OPEN_CALLS,
    PATH_CONSTRUCTORS,
    READ_METHODS,
    STDIN_CALLS,
    TEMP_CALLS,
    PathKind,
    classify_text,
    module_hits,
)

MAX_BITS = 128
"""Constant integers are evaluated up to 2**128; anything larger saturates to that."""
SATURATED = 1 << MAX_BITS
_DEPTH = 8
_BUILTINS = frozenset(dir(builtins))


def import_aliases(tree: ast.AST) -> dict[str, str]:
    """Local names bound by imports anywhere in the source, mapped to what they name."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name != "*":
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


class Flow:
    """Import aliases and the latest assignment of each local name, scope by scope."""

    def __init__(self, tree: ast.AST) -> None:
        self.aliases = import_aliases(tree)
        self._scopes: list[dict[str, ast.expr | None]] = [{}]

    def push(self) -> None:
        """Enter a function body."""
        self._scopes.append({})

    def pop(self) -> None:
        """Leave a function body."""
        self._scopes.pop()

    def bind(self, target: ast.expr, value: ast.expr | None) -> None:
        """Record ``target = value``; unpacking forgets what the names held."""
        if isinstance(target, ast.Name):
            self._scopes[-1][target.id] = value
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self.bind(element, None)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, None)

    def lookup(self, name: str) -> ast.expr | None:
        """The expression last assigned to ``name`` in this function, else the module."""
        for scope in (self._scopes[-1], self._scopes[0]):
            if name in scope:
                return scope[name]
        return None

    def qualname(self, node: ast.expr) -> str | None:
        """``np.zeros`` -> ``numpy.zeros`` when numpy was imported as np."""
        if isinstance(node, ast.Name):
            if node.id in self.aliases:
                return self.aliases[node.id]
            # A name neither imported nor built in is the job's own variable: a list called
            # `requests` is not the requests library.
            return node.id if node.id in _BUILTINS else None
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def const_int(self, node: ast.expr, depth: int = 0) -> int | None:
        """The value of a constant integer expression, saturated at 2**128."""
        if depth > _DEPTH:
            return None
        if isinstance(node, ast.Constant):
            value = node.value
            return value if isinstance(value, int) and not isinstance(value, bool) else None
        if isinstance(node, ast.Name):
            bound = self.lookup(node.id)
            return self.const_int(bound, depth + 1) if bound is not None else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            value = self.const_int(node.operand, depth + 1)
            return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
        if isinstance(node, ast.BinOp):
            left = self.const_int(node.left, depth + 1)
            right = self.const_int(node.right, depth + 1)
            if left is None or right is None:
                return None
            return _binop(node.op, left, right)
        return None

    def path_kind(self, node: ast.expr, depth: int = 0) -> tuple[PathKind, str]:
        """Where a path expression points, with the literal text that decided it."""
        if depth > _DEPTH:
            return "unknown", ""
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            text = node.value if isinstance(node.value, str) else node.value.decode(
                errors="replace")
            return classify_text(text), text
        if isinstance(node, ast.JoinedStr):
            return self._fstring_kind(node)
        if isinstance(node, ast.Name):
            bound = self.lookup(node.id)
            return self.path_kind(bound, depth + 1) if bound is not None else ("unknown", "")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div | ast.Add):
            right = self.path_kind(node.right, depth + 1)
            if isinstance(node.op, ast.Div) and right[0] in ("outside", "tmp"):
                return right  # Path("out") / "/etc/x" is /etc/x
            return self.path_kind(node.left, depth + 1)
        if isinstance(node, ast.Call):
            return self._call_kind(node, depth)
        if isinstance(node, ast.Attribute) and node.attr in ("parent", "parents"):
            return self.path_kind(node.value, depth + 1)
        return "unknown", ""

    def _fstring_kind(self, node: ast.JoinedStr) -> tuple[PathKind, str]:
        first = node.values[0] if node.values else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            kind = classify_text(first.value)
            # A relative prefix stays inside unless a later part starts over, which the job
            # decides at run time; an absolute or parent prefix leaves for certain.
            return kind, first.value + "..."
        return "unknown", ""

    def _call_kind(self, node: ast.Call, depth: int) -> tuple[PathKind, str]:
        name = self.qualname(node.func) or ""
        if name in TEMP_CALLS:
            return "inside", ""  # TMPDIR lies inside the working directory
        if isinstance(node.func, ast.Attribute) and node.func.attr in (
                "joinpath", "with_name", "with_suffix", "resolve", "absolute", "expanduser"):
            for arg in node.args if node.func.attr == "joinpath" else []:
                kind = self.path_kind(arg, depth + 1)
                if kind[0] in ("outside", "tmp"):
                    return kind
            return self.path_kind(node.func.value, depth + 1)
        if name in PATH_CONSTRUCTORS and node.args:
            kinds = [self.path_kind(a, depth + 1) for a in node.args]
            # os.path.join and Path() restart at any absolute part.
            absolute = [k for k in kinds[1:] if k[0] in ("outside", "tmp", "device")]
            return absolute[-1] if absolute else kinds[0]
        return "unknown", ""

    def taint(self, node: ast.expr, depth: int = 0) -> str | None:
        """Where the value of ``node`` came from if it was read from a file, socket or URL."""
        if depth > _DEPTH:
            return None
        for child in _walk_expr(node):
            if isinstance(child, ast.Call):
                source = self._read_source(child)
                if source is not None:
                    return source
            elif isinstance(child, ast.Name):
                bound = self.lookup(child.id)
                found = self.taint(bound, depth + 1) if bound is not None else None
                if found is not None:
                    return found
        return None

    def _read_source(self, call: ast.Call) -> str | None:
        name = self.qualname(call.func) or ""
        if module_hits(name, NETWORK_MODULES) or name in NETWORK_CALLS:
            return f"the network ({name})"
        if name in STDIN_CALLS:
            return "standard input"
        if name in OPEN_CALLS or (
                isinstance(call.func, ast.Attribute) and call.func.attr in READ_METHODS):
            return f"a file or stream ({ast.unparse(call)[:60]})"
        return None


def _walk_expr(node: ast.expr) -> Iterator[ast.AST]:
    """Every node of an expression, not descending into lambdas (they run later, if ever)."""
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, ast.Lambda):
            stack.extend(ast.iter_child_nodes(current))


def _binop(op: ast.operator, left: int, right: int) -> int | None:
    """``left op right`` for integers, saturating instead of building enormous numbers."""
    bits = max(abs(left).bit_length(), 1)
    if isinstance(op, ast.Pow):
        if right < 0:
            return None
        if abs(left) <= 1:
            return left**right if right < MAX_BITS else (left if right % 2 else abs(left))
        return SATURATED if bits * right > MAX_BITS + 1 else _cap(left**right)
    if isinstance(op, ast.LShift):
        return SATURATED if right >= MAX_BITS else (None if right < 0 else _cap(left << right))
    if isinstance(op, ast.Mult):
        return SATURATED if bits + abs(right).bit_length() > MAX_BITS + 2 else _cap(left * right)
    simple = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.FloorDiv: int.__floordiv__}
    for kind, fn in simple.items():
        if isinstance(op, kind):
            return None if kind is ast.FloorDiv and right == 0 else _cap(fn(left, right))
    return None


def _cap(value: int) -> int:
    return SATURATED if value > SATURATED else value
