"""``assay approve`` and ``assay gates``: people decide human gates from the command line."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from workers.cli.common import EXIT_BAD_INPUT, client_for, fail, run_async
from workers.settings import Settings
from workflows.contracts.policy import GateKind


class GateName(StrEnum):
    """Gate kinds, as the command line spells them."""

    PLAN = "plan"
    STEP = "step"
    ERROR = "error"
    RESULT = "result"

    @property
    def kind(self) -> GateKind:
        """The kind as the policy names it."""
        return self.value


def approve(
    run_id: Annotated[str, typer.Argument(help="The run whose gate to decide.")],
    gate: Annotated[GateName, typer.Option("--gate", "-g", help="plan, step, error or result.")],
    task: Annotated[str | None, typer.Option("--task", "-t", help="The task, for task gates.")]
    = None,
    reject: Annotated[bool, typer.Option("--reject", help="Reject instead of approve.")] = False,
    comment: Annotated[str, typer.Option("--comment", "-m")] = "",
    by: Annotated[str | None, typer.Option("--by", help="Who decides (default: you).")] = None,
) -> None:
    """Approve (or --reject) a gate waiting for a person."""
    from workflows.client import GateDecisionError
    from workflows.contracts.executive import GateDecision

    settings = Settings()
    try:
        decision = GateDecision(gate=gate.kind, task_id=task, by=by or settings.user,
                                decision="reject" if reject else "approve", comment=comment)
    except ValueError as err:
        fail(f"invalid decision: {err}", EXIT_BAD_INPUT)

    async def go() -> None:
        client = await client_for(settings)
        try:
            record = await client.decide(run_id, decision)
        except GateDecisionError as err:
            fail(f"refused: {err}")
        where = f"task {task} " if task else ""
        typer.echo(f"{where}{record.gate} gate {record.status} by {record.by}")

    run_async(go())


def gates() -> None:
    """List the gates waiting for a person, and goal runs waiting for a plan, across all runs."""
    from workers.cli.show import decide_hint, plan_hint, short
    from workflows.common.words import singular_counts

    async def go() -> None:
        client = await client_for(Settings())
        pending = await client.pending_gates()
        if not pending:
            typer.echo("no gates or runs are waiting for a person")
        for item in pending:
            if item.gate is None:
                typer.echo(f"{item.run_id}  {plan_hint(item.run_id)}")
                continue
            task = f" --task {item.gate.task_id}" if item.gate.task_id else ""
            typer.echo(f"{item.run_id}{task} --gate {item.gate.gate}  "
                       f"(waiting since {item.gate.opened_at:%Y-%m-%d %H:%M}): "
                       f"{short(singular_counts(item.gate.question))}; "
                       + decide_hint(item.run_id, item.gate, item.approvers))

    run_async(go())
