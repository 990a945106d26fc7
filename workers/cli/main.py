"""The ``assay`` command line: a thin shell over the stack, the workers and AssayClient."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError

from workers.cli.common import EXIT_BAD_INPUT, client_for, fail, print_table, run_async
from workers.cli.lazy import LazyGroup, lazy
from workers.settings import Settings
from workflows.contracts.pools import Pool

if TYPE_CHECKING:
    from workflows.contracts.results import RunReport

app = typer.Typer(cls=LazyGroup, add_completion=False, no_args_is_help=True,
                  help="Assay: durable, human-steerable research on Temporal.")


@app.command()
def up(detach: Annotated[bool, typer.Option(
        "--detach", "-d", help="Run in the background; return once every pool is served, or "
                               "exit 1 with the reason.")] = False) -> None:
    """Start (or reuse) the embedded stack: Temporal, PostgreSQL, Qdrant and all worker pools."""
    from workers.stack import launcher as stack
    from workers.stack.process import receive_secrets

    receive_secrets()
    raise typer.Exit(stack.up(Settings(), detach=detach))


@app.command()
def down() -> None:
    """Stop a stack started in the background with ``assay up --detach``."""
    from workers.stack import launcher as stack

    raise typer.Exit(stack.down(Settings()))


@app.command()
def check() -> None:
    """Report the health of each part of the stack; exit non-zero if one is down."""
    from workers.stack import launcher as stack

    items = stack.check(Settings())
    width = max(len(item.name) for item in items)
    for item in items:
        mark = "DOWN" if not item.ok else "warn" if item.warning else "ok  "
        typer.echo(f"{mark}  {item.name:<{width}}  {item.detail}")
    raise typer.Exit(0 if all(item.ok for item in items) else 1)


@app.command()
def worker(pool: Annotated[list[Pool], typer.Option("--pool", "-p",
                                                     help="Pool(s) to serve.")]) -> None:
    """Serve one or more pools against configured services (for deployments)."""
    from workers.pools.builders import run_pools
    from workers.pools.versioning import describe_version
    from workers.stack.launcher import database_url

    settings = Settings()
    typer.echo(f"assay worker ({', '.join(p.value for p in pool)}): {describe_version(settings)}")

    async def serve() -> None:
        stop = asyncio.Event()
        _on_signals(stop.set)
        await run_pools(settings, pool, database_url=database_url(settings), stop=stop)

    run_async(serve())


def _on_signals(callback: Callable[[], None]) -> None:
    import signal

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, callback)


lazy("run", "workers.cli.run", "run", "Start a run of a plan file or of a research goal; "
     "with --wait, follow it to the end.")
lazy("eval", "workers.cli.evaluate", "eval_app", "Run a research suite --repeat times per "
     "--ablate configuration and score pass@1/pass@k.")
lazy("plan", "workers.cli.plan", "plan", "Give a plan (checked like `assay run`) to a goal run "
     "waiting for one, or to a study.")

lazy("status", "workers.cli.status", "status", "Show a run's phase, times and task tally, its "
     "tasks (a job's heartbeat too), who decides.")


@app.command()
def watch(run_id: str,
          follow: Annotated[bool, typer.Option(help="Keep watching until the run ends.")] = True,
          as_json: Annotated[bool, typer.Option(
              "--json", help="One JSON object per event (and per refusal) per line.")] = False,
          tree: Annotated[bool, typer.Option(
              "--tree", help="Print the events once, indented as they nest: run, task, phase, "
              "attempt or debugger, then the calls and job runs inside.")] = False,
          ) -> None:
    """Print a run's events as readable lines, in the order they were recorded."""
    from activities.events.store import EventStore
    from workers.cli.watch import watch_run, watch_tree
    from workers.stack.launcher import database_url

    settings = Settings()

    async def go() -> int:
        client = await client_for(settings)
        store = EventStore(database_url(settings, start=False))
        await store.open()
        try:
            if tree:
                return await watch_tree(client, store, run_id, as_json=as_json,
                                        echo=typer.echo)
            return await watch_run(client, store, run_id, follow=follow, as_json=as_json,
                                   echo=typer.echo)
        finally:
            await store.close()

    raise typer.Exit(run_async(go()))


@app.command()
def report(run_id: str,
           as_json: Annotated[bool, typer.Option("--json")] = False,
           archive: Annotated[bool, typer.Option(
               "--archive", help="Pack the run's report folder as one tar.gz with a sha256 "
               "manifest (MANIFEST.sha256) and print its path.")] = False) -> None:
    """Print a finished run's report (Markdown, or the results JSON), or pack it."""
    from activities.reports.markdown import render_markdown

    async def go() -> None:
        settings = Settings()
        report = await _report(settings, run_id)
        if archive:
            from activities.reports.archive import ArchiveError
            from workers.cli.show import archive_report
            try:
                typer.echo(str(archive_report(settings.runs_dir, report)))
            except (ArchiveError, OSError) as err:
                fail(f"cannot archive the report of {run_id}: {err}")
            return
        typer.echo(report.model_dump_json(indent=2) if as_json else render_markdown(report))

    run_async(go())


async def _report(settings: Settings, run_id: str) -> RunReport:
    """A finished run's report: from Temporal's result, or its file when Temporal is down."""
    from workers.cli.reconnect import lost_connection
    from workers.cli.show import load_report, report_file
    from workflows.contracts.results import RunReport, outline_report

    try:
        client = await client_for(settings)
        running = await client.status(run_id) == "running"
    except Exception as err:
        found = report_file(settings.runs_dir, run_id)
        if not lost_connection(err) or found is None:
            raise
        typer.echo(f"note: Temporal cannot be reached; showing the report file {found}",
                   err=True)
        return RunReport.model_validate_json(found.read_text(encoding="utf-8"))
    if running:
        fail(f"run {run_id} is still running; see `assay status {run_id}`")
    result = await client.result(run_id)
    report = load_report(result, settings.artifact_store())
    if report is None:
        where = result.report.results_json if result.report else "none was written"
        typer.echo(f"the results JSON of {run_id} cannot be read here ({where}); showing "
                   "each task's status and reason without its detail", err=True)
        report = outline_report(result)
    return report


TALLIES = 16
"""Runs ``assay runs`` asks for their tallies at once: one whose worker is gone waits its query's
timeout, so the listing takes about one timeout, not one per such run."""


@app.command()
def runs(limit: Annotated[int, typer.Option(min=1, max=1000)] = 20) -> None:
    """List recent runs: status (``deferred``, ``partial``... once ended), tasks, duration, goal.

    A run that was reset is listed once per execution, each named by its short run id.
    """
    from collections import Counter

    from workers.cli.common import gather_bounded
    from workers.cli.show import run_row

    async def go() -> None:
        client = await client_for(Settings())
        summaries = await gather_bounded(
            [client.task_counts(s) for s in await client.list_runs(limit=limit)], TALLIES)
        listed = Counter(summary.run_id for summary in summaries)
        print_table(["RUN", "STATUS", "TASKS", "STARTED", "DURATION", "GOAL"],
                    [run_row(summary, datetime.now(UTC), execution=listed[summary.run_id] > 1)
                     for summary in summaries])

    run_async(go())


lazy("approve", "workers.cli.gates", "approve", "Approve, --reject or --modify a gate waiting "
     "for a person; --choose at branch or cycle.")
lazy("gates", "workers.cli.gates", "gates", "List the gates waiting for a person, and runs and "
     "studies waiting for a plan.")
lazy("branch", "workers.cli.branch", "branch", "Start branches of a run from a task's "
     "checkpoint (a closed run: a new linked run).")
lazy("checkpoint", "workers.cli.checkpoints", "checkpoint", "Name a running run's state now, "
     "so branches can start from it.")
lazy("checkpoints", "workers.cli.checkpoints", "checkpoints", "List a run's named "
     "checkpoints: people's, and those of its errors and approvals.")
lazy("branches", "workers.cli.branches", "branches", "Show a run's branch tree and a comparison "
     "table per group of sibling branches.")
for _action, _help in (
        ("pause", "Pause a run: no new task or branch starts; running jobs finish."),
        ("resume", "Resume a paused run."),
        ("cancel", "Cancel a run: its tasks and branches end with a final status; the report is "
                   "still written."),
        ("close", "Close a run held open for branches (its report is then written).")):
    lazy(_action, "workers.cli.steer", "steer_command", _help, make=True)
lazy("migrate", "workers.cli.migrate", "migrate", "Upgrade the database schema to the newest "
     "revision (stores also do it when they open).")
lazy("study", "workers.cli.study", "study_app", "Studies: a goal or plan pursued in cycles.")
lazy("hypotheses", "workers.cli.studies", "hypotheses", "Show a study's hypothesis tree: each "
     "one's parent, status, test and evidence.")
lazy("stop", "workers.cli.studies", "stop", "Stop a study after the cycle that runs (one "
     "waiting for a plan or a gate ends now).")
lazy("memory", "workers.cli.memory", "memory_app", "Reflection memory: semantic rules, "
     "procedural templates, episodes and the ledger.")
lazy("skills", "workers.cli.skills", "skills_app", "The skill library: list, show, search, "
     "approve, retire, export and import skills.")
lazy("envs", "workers.cli.envs", "envs_app", "Job environments: list the provisioned ones, "
     "prepare one, remove or prune them.")
lazy("codec-server", "workers.cli.codec", "codec_server", "Serve the Web UI's remote codec "
     "endpoint (POST /decode, /encode) with the payload keys.")
lazy("codec-key", "workers.cli.codec", "codec_key", "Print a new payload key as ID=BASE64; put "
     "it first in ASSAY_CODEC_KEYS to rotate.")

def main() -> None:
    """Entry point of ``assay`` and ``python -m workers.cli``.

    Exits with ``os._exit`` once the command is done and its output flushed: the Temporal
    client's native runtime threads can crash interpreter finalization when they are still
    winding down, which would turn a finished command into a signal exit.
    """
    try:
        app()
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except ValidationError as err:
        if err.title != Settings.__name__:
            raise
        typer.echo(f"error: {Settings.describe_errors(err)}", err=True)
        code = EXIT_BAD_INPUT
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
