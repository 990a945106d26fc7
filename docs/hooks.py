"""MkDocs hooks: the CLI and settings references, generated from the code at every build.

``reference/cli.md`` is written from the ``assay`` typer app (every command, sub-command,
argument and option, with its help) and ``reference/settings.md`` from the ``Settings`` class
(every field, its variable, type, default, bounds and docstring). Neither is a file in the
repository, so neither can drift from the code.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
import sys
from enum import Enum
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
"""The repository: imported from here, not from whatever copy the environment installed."""

CLI_PAGE = "reference/cli.md"
SETTINGS_PAGE = "reference/settings.md"
BOUNDS = (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"),
          ("min_length", "length ≥"), ("max_length", "length ≤"), ("pattern", "matches"))
"""The constraints of a field the settings reference names, and how it writes them."""
SETTINGS_TOPICS = (
    "Where groups of them are explained: the data directory in [One data directory]"
    "(../operations/data-directory.md); Temporal's TLS, API key and the payload codec in "
    "[Encryption and a secured Temporal](../operations/encryption.md); the artifact store "
    "(`ASSAY_STORE_*`) in [Security](../operations/security.md); job limits in [What happens "
    "to a task](../concepts/task-lifecycle.md); metrics in [Metrics](../operations/metrics.md);"
    " worker versioning in [Upgrading workers](../operations/upgrades.md); models in [Models]"
    "(../guides/models.md); data profiles in [Goals](../guides/goals.md); memory and skills in "
    "[Reflection memory](../guides/memory.md) and [Skill library](../guides/skills.md); job "
    "environments in [Job environments](../guides/environments.md).",)
"""The guides that explain the settings, linked from the top of the settings reference."""
SHELL_OPTIONS = ("help", "install_completion", "show_completion")
"""Options typer adds to every app for the shell, not Assay's: left out of the reference."""


def _import_root() -> None:
    if str(ROOT) not in sys.path or sys.path[0] != str(ROOT):
        sys.path.insert(0, str(ROOT))


def text(raw: str) -> str:
    """Help text as Markdown: reST ``literals`` as code, ``<``, ``*`` and ``|`` escaped."""
    raw = raw.replace("\b\n", "").replace("``", "`")
    parts = re.split(r"(`[^`]*`)", raw)
    for i, part in enumerate(parts):
        if not part.startswith("`"):
            parts[i] = (part.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                        .replace("*", r"\*").replace("_", r"\_"))
    return "".join(parts).replace("|", r"\|")


def cli_commands() -> list[tuple[str, Any]]:
    """Every command of ``assay`` as (full name, click command), groups and their members."""
    _import_root()
    import typer.main
    from typer import _click as click  # the click Typer carries (its groups are this click's)

    from workers.cli.main import app

    top = typer.main.get_command(app)
    found: list[tuple[str, Any]] = []

    def walk(name: str, command: Any) -> None:
        found.append((name, command))
        if hasattr(command, "list_commands"):
            ctx = click.Context(command, info_name=name)
            for sub in command.list_commands(ctx):
                walk(f"{name} {sub}", command.get_command(ctx, sub))

    walk("assay", top)
    return found


def _option_row(param: Any) -> str:
    names = ", ".join(f"`{n}`" for n in [*param.opts, *param.secondary_opts])
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", "text")
    kind = "flag" if getattr(param, "is_flag", False) else _type_name(annotation)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        kind = "one of " + ", ".join(f"`{member.value}`" for member in annotation)
    if param.param_type_name == "argument":
        names, kind = f"`{param.metavar or param.name.upper()}`", f"argument ({kind})"
    default = param.default
    shown = "" if default in (None, False, "") or callable(default) else f"`{default}`"
    if getattr(param, "multiple", False) and not default:
        shown = "repeatable"
    if param.required:
        shown = "required"
    return f"| {names} | {kind} | {shown} | {text(getattr(param, 'help', None) or '')} |"


def cli_reference() -> str:
    """The Markdown page of every command and option, from the typer app."""
    lines = ["# Command line", "",
             "Generated from the `assay` typer app (`workers/cli/main.py`) at every build: "
             "each command, its arguments and options, with the help `assay COMMAND --help` "
             "prints. For how the commands fit together, see the "
             "[command-line guide](../guides/cli.md).", ""]
    commands = cli_commands()
    lines += ["| command | what it does |", "| --- | --- |",
              *(f"| [`{name}`](#{name.replace(' ', '-')}) | "
                f"{text(inspect.cleandoc(command.help or '').splitlines()[0])} |"
                for name, command in commands[1:] if command.help), ""]
    for name, command in commands:
        ctx_usage = " ".join(p.metavar or p.name.upper()
                             for p in command.params if p.param_type_name == "argument")
        usage = " ".join(part for part in (name, "[OPTIONS]", ctx_usage) if part)
        lines += [f"## `{name}`", "", text(inspect.cleandoc(command.help or "")), "",
                  f"Usage: `{usage}`", ""]
        params = [p for p in command.params if p.name not in SHELL_OPTIONS]
        if params:
            lines += ["| name | kind | default | help |", "| --- | --- | --- | --- |",
                      *(_option_row(p) for p in params), ""]
    return "\n".join(lines)


def field_docstrings(cls: type) -> dict[str, str]:
    """Each attribute's docstring (the string right after it) in ``cls``'s own source."""
    tree = ast.parse(inspect.getsource(cls))
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
    found: dict[str, str] = {}
    for node, after in itertools.pairwise(body):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            found[node.target.id] = inspect.cleandoc(after.value.value)
    return found


def _type_name(annotation: Any) -> str:
    shown = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    shown = shown or str(annotation)
    return re.sub(r"\b(?:[a-z_]+\.)+([A-Za-z_]+)", r"\1", shown).replace("typing.", "")


def _bounds(field: Any) -> str:
    said: list[str] = []
    for item in field.metadata:
        for attribute, word in BOUNDS:
            value = getattr(item, attribute, None)
            if value is not None:
                said.append(f"{word} `{value}`")
    return ", ".join(said)


def setting_variables(name: str, field: Any) -> list[str]:
    """The environment variables a field is read from."""
    alias = field.validation_alias
    choices = getattr(alias, "choices", None)
    if choices:
        return [c for c in choices if isinstance(c, str) and c.isupper()]
    return [f"ASSAY_{name.upper()}"]


def settings_reference() -> str:
    """The Markdown page of every setting, from ``Settings``' fields and docstrings."""
    _import_root()
    from pydantic import SecretStr

    from workers.settings import Settings

    docs = field_docstrings(Settings)
    lines = ["# Settings", "", text(inspect.cleandoc(Settings.__doc__ or "")), "",
             "Generated from `workers/settings.py` at every build: each field of `Settings`, "
             "the variable it is read from, its type, default and bounds, and its docstring.",
             "", *SETTINGS_TOPICS, ""]
    for name, field in Settings.model_fields.items():
        variables = setting_variables(name, field)
        default = ("computed" if field.default_factory is not None
                   else "unset" if field.default is None else f"`{field.default}`")
        secret = "SecretStr" in str(field.annotation) or field.annotation is SecretStr
        facts = [f"type `{_type_name(field.annotation)}`", f"default {default}"]
        facts += [b for b in [_bounds(field)] if b]
        facts += ["a secret: never logged, never in a workflow"] if secret else []
        lines += [f"## `{variables[0]}`", "",
                  ("Also read from " + ", ".join(f"`{v}`" for v in variables[1:]) + ". ")
                  if len(variables) > 1 else "",
                  "; ".join(facts) + ".", "", text(docs.get(name, "")), ""]
    return "\n".join(lines)


def on_files(files: Any, config: Any) -> Any:
    """Add the generated reference pages to the site's files."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, CLI_PAGE, content=cli_reference()))
    files.append(File.generated(config, SETTINGS_PAGE, content=settings_reference()))
    return files
