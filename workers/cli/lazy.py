"""Commands imported only when they run, so ``assay --help`` and ``assay status`` start fast.

Most commands live in modules that import the workflow contracts, the reports or a database
driver; importing all of them costs more than any one command needs. ``LazyGroup`` is the
``assay`` group: a command registered with :func:`lazy` is loaded from its module the first
time it is resolved to run (or asked for its own help); the top-level help lists it by the
short help given at registration (a test checks it is the command's own).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import typer
import typer.main
from typer import _click as click  # the click Typer carries (its groups are this click's)
from typer.core import TyperCommand, TyperGroup


@dataclass(frozen=True)
class Lazy:
    """Where a command is, and the line the top-level help shows for it."""

    module: str
    attribute: str
    short_help: str
    make: bool = False
    """The attribute is a factory taking the command's name (it returns the function)."""

    def load(self, name: str) -> click.Command:
        """The command itself (a Typer sub-app becomes its group)."""
        found: Any = getattr(importlib.import_module(self.module), self.attribute)
        if self.make:
            found = found(name)
        if isinstance(found, typer.Typer):
            group = typer.main.get_group(found)
            group.name = name
            return group
        single = typer.Typer()
        single.command(name=name)(_as_callable(found))
        return typer.main.get_command(single)


def _as_callable(found: Any) -> Callable[..., Any]:
    if not callable(found):
        raise TypeError(f"{found!r} is not a command")
    return found


LAZY: dict[str, Lazy] = {}
"""Name -> where the command is; filled by ``workers.cli.main``."""


def lazy(name: str, module: str, attribute: str, short_help: str, *, make: bool = False) -> None:
    """Register command ``name`` to be loaded from ``module.attribute`` when it runs."""
    LAZY[name] = Lazy(module, attribute, short_help, make)


class LazyGroup(TyperGroup):
    """The ``assay`` group: its own commands, and the lazily loaded ones of :data:`LAZY`."""

    _listing = False
    _loaded: dict[str, click.Command] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, the lazy ones' too."""
        return sorted({*super().list_commands(ctx), *LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command itself; while the group's help is written, a lazy one's stand-in."""
        own = super().get_command(ctx, cmd_name)
        if own is not None or cmd_name not in LAZY:
            return own
        entry = LAZY[cmd_name]
        if LazyGroup._listing:
            return TyperCommand(cmd_name, help=entry.short_help, short_help=entry.short_help)
        if cmd_name not in LazyGroup._loaded:
            LazyGroup._loaded[cmd_name] = entry.load(cmd_name)
        return LazyGroup._loaded[cmd_name]

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The group's help, listing lazy commands without importing them."""
        LazyGroup._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            LazyGroup._listing = False
