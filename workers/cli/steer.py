"""``assay pause|resume|cancel|close RUN`` and ``assay branches RUN``: steer a run, see its tree.

Each steering command sends a ``SteerRequest`` through the run's ``steer_run`` update; a
refusal (who may steer, or why not now) is printed with exit code 2. ``assay branches`` prints
the run's branch tree and how its lines compared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from workers.cli.common import EXIT_BAD_INPUT, ByOption, client_for, fail, run_async
from workers.cli.fields import InputError, signed
from workers.settings import Settings
from workflows.contracts.branches import SteerAction

DONE: dict[SteerAction, str] = {
    "pause": "paused: no new task or branch starts; running jobs finish, gates keep waiting",
    "resume": "resumed",
    "cancel": "cancelled: its tasks and branches are cancelled and get a final status; the "
              "report is still written",
    "close": "closed: it ends once its tasks and branches have; branching it later starts a "
             "new run linked to it",
}
HELP: dict[SteerAction, str] = {
    "pause": "Pause a run: no new task or branch starts; running jobs finish.",
    "resume": "Resume a paused run.",
    "cancel": "Cancel a run: its tasks and branches end with a final status; the report "
              "is still written.",
    "close": "Close a run held open for branches (its report is then written).",
}


def steer_command(action: SteerAction) -> Callable[..., None]:
    """The ``assay ACTION RUN`` command sending ``action`` through ``steer_run``."""

    def command(run_id: Annotated[str, typer.Argument(help="The run to steer.")],
                by: ByOption = None,
                comment: Annotated[str, typer.Option("--comment", "-m")] = "") -> None:
        steer(run_id, action, by, comment)

    command.__doc__ = HELP[action]
    return command


def steer(run_id: str, action: SteerAction, by: str | None, comment: str) -> None:
    """Send ``action`` to run ``run_id``; print what it did, or the refusal (exit 2)."""
    from client.steering import SteeringClient, SteerRefusedError
    from workflows.contracts.branches import SteerRequest

    settings = Settings()
    try:
        request = signed(SteerRequest, by or settings.user, comment, "request", action=action)
    except InputError as err:
        fail(str(err), EXIT_BAD_INPUT)

    async def go() -> None:
        steering = SteeringClient(await client_for(settings))
        try:
            await steering.steer(run_id, request)
        except SteerRefusedError as err:
            fail(f"refused: {err}", EXIT_BAD_INPUT)
        typer.echo(f"run {run_id} {DONE[action]} (by {request.by})")

    run_async(go())
