"""``assay pause|resume|cancel|close RUN`` and ``assay branches RUN``: steer a run, see its tree.

Each steering command sends a ``SteerRequest`` through the run's ``steer_run`` update; a
refusal (who may steer, or why not now) is printed with exit code 2. ``assay branches`` prints
the run's branch tree and how its lines compared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer
from pydantic import ValidationError

from workers.cli.common import EXIT_BAD_INPUT, ByOption, client_for, fail, print_table, run_async
from workers.cli.fields import InputError, plain
from workers.settings import Settings
from workflows.common.validation import field_errors
from workflows.contracts.branches import BranchRecord, BranchTree, LineScore, SteerAction

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
    from workflows.contracts.branches import SteerRequest
    from workflows.steering_client import SteeringClient, SteerRefusedError

    settings = Settings()
    try:
        request = SteerRequest(action=action, by=plain(by or settings.user, "--by"),
                               comment=plain(comment, "--comment", lines=True))
    except InputError as err:
        fail(str(err), EXIT_BAD_INPUT)
    except ValidationError as err:
        fail("invalid request: " + "; ".join(map(str, field_errors(err, plain=True))),
             EXIT_BAD_INPUT)

    async def go() -> None:
        steering = SteeringClient(await client_for(settings))
        try:
            await steering.steer(run_id, request)
        except SteerRefusedError as err:
            fail(f"refused: {err}", EXIT_BAD_INPUT)
        typer.echo(f"run {run_id} {DONE[action]} (by {request.by})")

    run_async(go())


def branches(run_id: Annotated[str, typer.Argument(help="The run whose branches to show.")],
             as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show a run's branch tree and how its lines compared."""
    from workflows.steering_client import SteeringClient

    async def go() -> None:
        tree = await SteeringClient(await client_for(Settings())).branches(run_id)
        if as_json:
            typer.echo(tree.model_dump_json(indent=2))
            return
        for line in tree_lines(tree):
            typer.echo(line)
        if tree.branches:
            print_table(["LINE", "FROM", "KIND", "STATUS", "RANK", "METRIC", "CHECKS",
                         "WALL_S", "KEPT"], branch_rows(tree))

    run_async(go())


def tree_lines(tree: BranchTree) -> list[str]:
    """The run's state and steering log, before the table."""
    state = ", ".join(s for s, on in (("paused", tree.paused), ("held open", tree.holding))
                      if on)
    lines = [f"run {tree.run_id}: {len(tree.branches)} branches"
             + (f" ({state})" if state else "")]
    lines += [f"  steered: {s}" for s in tree.steering]
    lines += [f"  refused: {s}" for s in tree.refused]
    return lines


def branch_rows(tree: BranchTree) -> list[list[str]]:
    """One row per branch, and the main line's row in each group it was compared in."""
    rows: list[list[str]] = []
    for group in dict.fromkeys(b.group for b in tree.branches):
        main = tree.main.get(group)
        if main is not None:
            rows.append(_row("main", "-", "-", "", main, kept=False))
        rows += [_record_row(b) for b in tree.branches if b.group == group]
    return rows


def _record_row(record: BranchRecord) -> list[str]:
    return _row(record.name, f"{record.from_task}:{record.from_phase}", record.kind,
                record.status, record.score, kept=record.selected)


def _row(name: str, start: str, kind: str, status: str, score: LineScore, *,
         kept: bool) -> list[str]:
    metric = "-" if score.metric is None else f"{score.metric:.6g}"
    return [name, start, kind, status or ("completed" if score.completed else "-"),
            str(score.rank or "-"), metric,
            f"{score.checks_passed}/{score.checks_declared}", f"{score.wall_s:.1f}",
            "yes" if kept else ""]
