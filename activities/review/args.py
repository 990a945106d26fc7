"""Reading a job's argparse declarations from its source, to check the plan's ``args`` early.

The sandbox passes every arg as ``--key=value`` (booleans as ``true``/``false``). A job that
declares its options with argparse exits with status 2 before doing any work when a value does
not convert, a required flag is missing or a flag is unknown, so these mistakes are found from
the source alone, before anything runs. Only literal declarations are understood; a parser built
in a loop or from parent parsers makes the analysis incomplete, and then unknown flags are not
reported.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import cast

from workflows.contracts.plan import Scalar

NO_VALUE_ACTIONS = frozenset({"store_true", "store_false", "store_const", "append_const",
                              "count", "help", "version", "BooleanOptionalAction"})
"""Actions whose flag takes no value: argparse refuses ``--flag=true`` for them."""


@dataclass
class Option:
    """One ``add_argument`` call, as far as literals tell."""

    flags: list[str]
    line: int
    type_name: str | None = None
    action: str | None = None
    required: bool = False
    choices: list[object] | None = None
    positional: bool = False
    optional_positional: bool = False


@dataclass
class ArgparseSpec:
    """Every option a source declares and how far the declarations can be trusted."""

    options: list[Option] = field(default_factory=list[Option])
    complete: bool = True
    """Every declaration was literal (no loops over names, parents or subparsers)."""
    strict: bool = False
    """The source calls ``parse_args`` (unknown flags are fatal), not ``parse_known_args``."""

    def find(self, flag: str) -> Option | None:
        """The option declaring ``flag`` exactly."""
        return next((o for o in self.options if flag in o.flags), None)

    def long_flags(self) -> list[str]:
        """Every declared ``--flag``, in declaration order."""
        return [f for o in self.options for f in o.flags if f.startswith("--")]


def flag_text(value: Scalar) -> str:
    """The text argparse receives for ``value`` (as the sandbox formats ``--key=value``)."""
    return json.dumps(value) if isinstance(value, bool) else str(value)


def imports_argparse(tree: ast.AST) -> bool:
    """Whether the source imports argparse at all (otherwise ``add_argument`` is not ours)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "argparse":
            return True
    return False


def argparse_spec(tree: ast.AST) -> ArgparseSpec | None:
    """The argparse declarations of a parsed source, or ``None`` if it does not use argparse."""
    if not imports_argparse(tree):
        return None
    spec = ArgparseSpec()
    known_args = False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else (
            node.func.id if isinstance(node.func, ast.Name) else "")
        if name == "add_argument":
            option = _option(node)
            if option is None:
                spec.complete = False
            else:
                spec.options.append(option)
        elif name == "add_subparsers" or any(
                k.arg == "parents" for k in node.keywords):
            spec.complete = False
        elif name == "parse_args":
            spec.strict = True
        elif name in ("parse_known_args", "parse_known_intermixed_args"):
            known_args = True
    spec.strict = spec.strict and not known_args
    return spec


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _Unknown


class _Unknown:
    """Marker for an expression that is not a literal."""


def _keyword_name(node: ast.expr) -> str | None:
    """``int`` -> ``int``; ``argparse.BooleanOptionalAction`` -> ``BooleanOptionalAction``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    value = _literal(node)
    return value if isinstance(value, str) else None


def _option(call: ast.Call) -> Option | None:
    """One ``add_argument`` call, or ``None`` when its flags are not literal strings."""
    flags = [_literal(a) for a in call.args]
    if not flags or any(isinstance(a, ast.Starred) for a in call.args) or not all(
            isinstance(f, str) and f for f in flags):
        return None
    names = [f for f in flags if isinstance(f, str)]
    option = Option(flags=names, line=call.lineno, positional=not names[0].startswith("-"))
    for keyword in call.keywords:
        if keyword.arg is None:
            return None  # **kwargs: the declaration is not literal
        _apply_keyword(option, keyword.arg, keyword.value)
    return option


def _apply_keyword(option: Option, name: str, value: ast.expr) -> None:
    if name == "type":
        option.type_name = _keyword_name(value) if isinstance(value, ast.Name) else "other"
    elif name == "action":
        option.action = _keyword_name(value) or "other"
    elif name == "required":
        option.required = _literal(value) is True
    elif name == "choices":
        choices = _literal(value)
        if isinstance(choices, list | tuple | set):
            option.choices = list(cast("Iterable[object]", choices))
    elif name == "nargs":
        option.optional_positional = _literal(value) in ("?", "*") or option.optional_positional
    elif name == "default":
        option.optional_positional = True


def convert(option: Option, text: str) -> tuple[object, str | None]:
    """Convert ``text`` as argparse would, returning the value and an error, if any."""
    converters = {"int": int, "float": float, "str": str}
    converter = converters.get(option.type_name or "str")
    if converter is None:
        return text, None  # a callable we cannot run here (Path, a lambda, FileType...)
    try:
        return converter(text), None
    except ValueError:
        return text, f"invalid {option.type_name} value: {text!r}"
