"""``assay plan``: a person gives a plan to a goal run that waits for one, or to a study.

A study takes it as the plan of its next cycle, before the study's own plans.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workers.cli.common import EXIT_BAD_INPUT, client_for, fail, run_async
from workers.settings import Settings
from workflows.contracts.words import plural

MAX_BY_CHARS = 128


def plan(
    run_id: Annotated[str, typer.Argument(
        help="The goal run waiting for a plan, or a study (the plan of its next cycle).")],
    plan_file: Annotated[Path, typer.Argument(metavar="FILE",
                                              help="A plan file (plan.json).")],
    by: Annotated[str | None, typer.Option("--by", help="Who gives the plan (default: you).")]
    = None,
) -> None:
    """Give a plan (checked like `assay run`) to a goal run waiting for one, or to a study."""
    from client.assay import PlanSupplyError, RunNotFoundError
    from workers.intake.planfile import PlanFileError, load_supplied_plan

    settings = Settings()
    author = check_author(settings.user if by is None else by)
    try:
        supplied = load_supplied_plan(plan_file, max_bytes=settings.max_plan_bytes, by=author,
                                      store=settings.artifact_store())
    except PlanFileError as err:
        fail(str(err), EXIT_BAD_INPUT)

    async def go() -> None:
        from workers.cli.studies import study_client

        client = await client_for(settings)
        studies = study_client(client)
        study = await studies.is_study(run_id)
        try:
            if study:
                await studies.supply_plan(run_id, supplied)
            else:
                await client.supply_plan(run_id, supplied)
        except (PlanSupplyError, RunNotFoundError) as err:
            fail(f"refused: {err}", EXIT_BAD_INPUT)
        tasks = plural(len(supplied.plan.decisions), "task")
        if study:
            typer.echo(f"plan {supplied.plan_name} accepted by study {run_id}: {tasks}; it "
                       "runs as the study's next cycle, before the study's own plans")
            return
        typer.echo(f"plan {supplied.plan_name} accepted by {run_id}: {tasks}")

    run_async(go())


def check_author(name: str) -> str:
    """Who gives the plan, as the run will record it; exits 2 when the name is unusable."""
    name = name.strip()
    if not name or len(name) > MAX_BY_CHARS or not name.isprintable():
        fail(f"--by: give a name of 1 to {MAX_BY_CHARS} printable characters", EXIT_BAD_INPUT)
    return name
