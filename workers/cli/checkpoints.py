"""``assay checkpoint RUN --name NAME`` and ``assay checkpoints RUN``: name a run's state, list.

``checkpoint`` sends a ``CheckpointRequest`` through the run's ``checkpoint`` update; the run
refuses a name that is taken or malformed, one too many, or any once it has ended, and the
refusal is printed with exit code 2. ``checkpoints`` lists those people named and the ones
the run named at its errors and approvals. ``assay branch RUN --from-checkpoint NAME`` starts
from one.
"""

from __future__ import annotations

import json
import re
from typing import Annotated

import typer

from workers.cli.common import EXIT_BAD_INPUT, ByOption, client_for, fail, print_table, run_async
from workers.cli.fields import InputError, parse_checkpoint, plain, signed
from workers.settings import Settings
from workflows.contracts.checkpoints import NAME_CHARS, NAME_PATTERN, CheckpointRequest
from workflows.contracts.words import plural


def checkpoint_request(name: str, by: str, comment: str, at: str | None) -> CheckpointRequest:
    """The request the options ask for, checked before anything is sent.

    Raises:
        InputError: a malformed, hostile or too long option; the message says which.
    """
    plain(name, "--name")
    if ":" in name:
        raise InputError(f"--name {name[:80]!r}: ':' marks the run's own checkpoints "
                         "(error:..., approval:...); name yours without it")
    if not re.fullmatch(NAME_PATTERN, name) or len(name) > NAME_CHARS:
        raise InputError(f"--name {name[:80]!r}: a checkpoint name is 1 to {NAME_CHARS} "
                         "letters, digits, '_', '.' or '-', starting with a letter or digit")
    task, phase = parse_checkpoint(at, "--at") if at is not None else (None, "planned")
    return signed(CheckpointRequest, by, comment, "checkpoint", name=name, task=task,
                  phase=phase)


def checkpoint(
    run_id: Annotated[str, typer.Argument(help="The running run whose state to name.")],
    name: Annotated[str, typer.Option("--name", help="The checkpoint's name "
                                      "(e.g. before-refit).")],
    at: Annotated[str | None, typer.Option(
        "--at", help="The branch point it stands for: TASK[:planned|execute|verify] "
                     "(default: the first task not finished yet).")] = None,
    by: ByOption = None,
    comment: Annotated[str, typer.Option("--comment", "-m")] = "",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Name a running run's state now, so branches can start from it."""
    from client.steering import CheckpointRefusedError, SteeringClient

    settings = Settings()
    try:
        request = checkpoint_request(name, by or settings.user, comment, at)
    except InputError as err:
        fail(str(err), EXIT_BAD_INPUT)

    async def go() -> None:
        steering = SteeringClient(await client_for(settings))
        try:
            point = await steering.checkpoint(run_id, request)
        except CheckpointRefusedError as err:
            fail(f"refused: {err}", EXIT_BAD_INPUT)
        if as_json:
            typer.echo(point.model_dump_json(indent=2))
            return
        start = f"task {point.from_task} ({point.from_phase})" if point.from_task else "no task"
        typer.echo(f"checkpoint {point.name} of run {run_id} named by {point.by}: "
                   f"{plural(point.finished, 'finished task')}, "
                   f"{plural(point.artifacts, 'artifact')}; a branch "
                   f"starts at {start} (`assay branch {run_id} --from-checkpoint {point.name} "
                   "--set ...`)")

    run_async(go())


def checkpoints(
    run_id: Annotated[str, typer.Argument(help="The run whose checkpoints to list.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """List a run's named checkpoints: people's, and those of its errors and approvals."""
    from activities.reports.checkpoints import HEADERS, dropped_line, rows
    from client.steering import SteeringClient

    async def go() -> None:
        steering = SteeringClient(await client_for(Settings()))
        listing = await steering.checkpoints(run_id)
        if as_json:
            typer.echo(json.dumps(listing.model_dump(mode="json"), indent=2))
            return
        if not listing.checkpoints:
            typer.echo(f"run {run_id} has no checkpoints yet (`assay checkpoint {run_id} "
                       "--name NAME` names one)")
        else:
            print_table(HEADERS, rows(listing))
        if dropped := dropped_line(listing):
            typer.echo(dropped)

    run_async(go())
