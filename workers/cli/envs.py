"""``assay envs``: the job environments of this machine, and provisioning one ahead of time.

A job naming an environment gets it provisioned before it runs; ``assay envs prepare science``
does it beforehand (``make run`` does, so the example's first task does not wait for the
download). Environments live under ``<data dir>/environments`` by digest and are reused by
every run on the machine; ``assay envs remove`` deletes one and ``assay envs prune`` those no
job has used for a number of days.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Annotated, Any

import typer

from activities.reports.numbers import byte_size
from workers.cli.common import EXIT_BAD_INPUT, fail, print_table, run_async
from workers.settings import Settings
from workflows.common.validation import FieldError, field_errors
from workflows.contracts.environments import BASE, PrepareEnvironmentInput

envs_app = typer.Typer(help="Job environments: list the provisioned ones, prepare one, "
                                "remove or prune them.")

RequirementOption = Annotated[list[str] | None, typer.Option(
    "--requirement", "-r", help="A package to add (PEP 508, e.g. 'seaborn>=0.13'); repeatable.")]


@envs_app.callback(invoke_without_command=True)
def envs(ctx: typer.Context) -> None:
    """List provisioned environments (name, digest, packages, size, created)."""
    if ctx.invoked_subcommand is None:
        list_envs()


@envs_app.command("list")
def list_envs() -> None:
    """List provisioned environments (name, digest, packages, size, created)."""
    environments = Settings().environments()
    records = environments.records()
    known = ", ".join(environments.catalog.names())
    if not records:
        typer.echo(f"no environments provisioned in {environments.root} (named sets: {known}); "
                   "`assay envs prepare science` makes one")
        return
    print_table(["name", "digest", "packages", "size", "created", "last used"],
                [_row(r, environments.catalog.added(str(r.get("name", "")),
                                            [str(q) for q in r.get("requirements", [])]))
                 for r in records])
    typer.echo(f"in {environments.root}; named sets: {known}")


@envs_app.command("prepare")
def prepare(name: Annotated[str, typer.Argument(help="A named set: science, or one of "
                                                     "ASSAY_ENVIRONMENTS_DIR.")],
            requirement: RequirementOption = None) -> None:
    """Resolve and provision an environment now, so jobs naming it start at once."""
    from pydantic import ValidationError

    from activities.environments import EnvironmentProblem

    try:
        asked = PrepareEnvironmentInput(environment=name, requirements=requirement or [])
    except ValidationError as err:
        fail(_refusal(field_errors(err, most=1, plain=True)[0]), EXIT_BAD_INPUT)
    if asked.environment == BASE:
        fail("base is the worker's own interpreter; nothing to prepare", EXIT_BAD_INPUT)
    environments = Settings().environments()
    try:
        prepared = run_async(environments.prepare(asked.environment, asked.requirements))
    except EnvironmentProblem as problem:
        fail(problem.reason, EXIT_BAD_INPUT if problem.kind != "unreachable" else 1)
    how = ("already provisioned, nothing installed" if prepared.reused
           else f"installed in {prepared.install_s:g} s")
    typer.echo(f"{prepared.label()}: {len(prepared.pins)} packages, {how}")
    typer.echo("  " + " ".join(prepared.pins))


def _refusal(error: FieldError) -> str:
    """One clear reason: a bad name by the rule in words, a requirement by its own message."""
    if error.where == "environment":
        return ("environment name refused: a name is lower-case letters, digits, - and _, "
                "starting with a letter, at most 40 characters")
    return f"requirement refused: {error.message}"


@envs_app.command("remove")
def remove_env(what: Annotated[str, typer.Argument(
        help="A digest prefix (at least 4 hex digits) or the name of one environment.")]) -> None:
    """Delete one provisioned environment; an ambiguous prefix or name is refused."""
    from activities.environments import EnvironmentProblem
    from activities.environments.cleanup import remove, select

    environments = Settings().environments()
    try:
        removed = remove(environments, select(environments, what))
    except EnvironmentProblem as problem:
        fail(problem.reason, EXIT_BAD_INPUT)
    typer.echo(f"removed {removed.name}@{removed.digest[:12]}, freed {byte_size(removed.freed)}")


@envs_app.command("prune")
def prune_envs(older_than: Annotated[float, typer.Option(
        "--older-than", min=0, max=36500,
        help="Remove environments no job has used for this many days.")] = 30) -> None:
    """Delete every environment not used for a job in the last DAYS days."""
    from activities.environments.cleanup import prune

    removed = prune(Settings().environments(), older_than)
    for one in removed:
        typer.echo(f"removed {one.name}@{one.digest[:12]} ({byte_size(one.freed)})")
    typer.echo(f"{len(removed)} environment(s) unused for {older_than:g} days removed, freed "
               f"{byte_size(sum(one.freed for one in removed))}")


def _row(record: dict[str, Any], added: list[str]) -> list[str]:
    """One environment: a named set with additions reads ``science + seaborn>=0.13``."""
    pins = [str(p) for p in record.get("pins", [])]
    shown = ", ".join(p.split("==")[0] for p in pins[:6]) + (" …" if len(pins) > 6 else "")
    name = str(record.get("name", "?"))
    if added and name != "custom":
        name += " + " + ", ".join(added)
    return [name, str(record.get("digest", ""))[:12], f"{len(pins)} ({shown})",
            byte_size(int(record.get("size", 0))), _when(record.get("created")),
            _when(record.get("last_used"))]


def _when(stamp: object) -> str:
    text = str(stamp or "")
    with contextlib.suppress(ValueError):
        text = datetime.fromisoformat(text).strftime("%Y-%m-%d %H:%M")
    return text or "-"
