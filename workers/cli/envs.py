"""``assay envs``: the job environments of this machine, and provisioning one ahead of time.

A job naming an environment gets it provisioned before it runs; ``assay envs prepare science``
does it beforehand (``make run`` does, so the example's first task does not wait for the
download). Environments live under ``<data dir>/environments`` by digest and are reused by
every run on the machine.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Annotated, Any

import typer

from workers.cli.common import EXIT_BAD_INPUT, fail, print_table, run_async
from workers.settings import Settings
from workflows.common.validation import FieldError, field_errors
from workflows.contracts.environments import BASE, PrepareEnvironmentInput

envs_app = typer.Typer(help="Job environments: list the provisioned ones, prepare one.")

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
    print_table(["name", "digest", "packages", "size", "created"],
                [_row(r) for r in records])
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


def _row(record: dict[str, Any]) -> list[str]:
    pins = [str(p) for p in record.get("pins", [])]
    shown = ", ".join(p.split("==")[0] for p in pins[:6]) + (" …" if len(pins) > 6 else "")
    created = str(record.get("created", ""))
    with contextlib.suppress(ValueError):
        created = datetime.fromisoformat(created).strftime("%Y-%m-%d %H:%M")
    return [str(record.get("name", "?")), str(record.get("digest", ""))[:12],
            f"{len(pins)} ({shown})", f"{int(record.get('size', 0)) >> 20} MiB", created]
