"""The ``assay`` command line: a thin shell over the stack, the workers and AssayClient."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer

from workers.cli_gates import GateName, OnTimeout, approve, gates
from workers.settings import Settings
from workflows.constants import Pool

if TYPE_CHECKING:
    from workflows.client import AssayClient

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Assay: durable, human-steerable research on Temporal.")
T = TypeVar("T")

EXIT_BAD_INPUT = 2
EXIT_UNAVAILABLE = 3


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error to stderr and exit with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine, turning unreachable services into a clear message."""
    from temporalio.client import WorkflowFailureError
    from temporalio.service import RPCError

    from workers.stack_process import StackError
    from workflows.client import RunExistsError, RunNotFoundError
    from workflows.failures import root_message

    try:
        return asyncio.run(coro)
    except (RunExistsError, RunNotFoundError, StackError) as err:
        fail(str(err))
    except WorkflowFailureError as err:
        fail(f"the run ended without a result: {root_message(err)}; see `temporal workflow "
             "describe --workflow-id <run>` for its history")
    except RPCError as err:
        fail(f"Temporal refused the request: {err.message}")
    except RuntimeError as err:
        if "connect" in str(err).lower() or "transport" in str(err).lower():
            fail(f"cannot reach Temporal: {err}\nIs the stack running? Start it with "
                 "`assay up` (or set ASSAY_TEMPORAL_ADDRESS).", EXIT_UNAVAILABLE)
        raise


async def client_for(settings: Settings) -> AssayClient:
    """The typed client, connected as settings say."""
    from workflows.client import AssayClient, connect

    client = await connect(settings.temporal_address, settings.temporal_namespace)
    return AssayClient(client, task_queue=settings.queue(Pool.ORCHESTRATION))


@app.command()
def up(detach: Annotated[bool, typer.Option("--detach", "-d",
                                            help="Run in the background.")] = False) -> None:
    """Start (or reuse) the embedded stack: Temporal, PostgreSQL, Qdrant and all worker pools."""
    from workers import stack

    raise typer.Exit(stack.up(Settings(), detach=detach))


@app.command()
def down() -> None:
    """Stop a stack started in the background with ``assay up --detach``."""
    from workers import stack

    raise typer.Exit(stack.down(Settings()))


@app.command()
def check() -> None:
    """Report the health of each part of the stack; exit non-zero if one is down."""
    from workers import stack

    items = stack.check(Settings())
    for item in items:
        typer.echo(f"{'ok ' if item.ok else 'DOWN'}  {item.name:<22} {item.detail}")
    raise typer.Exit(0 if all(item.ok for item in items) else 1)


@app.command()
def worker(pool: Annotated[list[Pool], typer.Option("--pool", "-p",
                                                     help="Pool(s) to serve.")]) -> None:
    """Serve one or more pools against configured services (for deployments)."""
    from workers.pools import run_pools
    from workers.stack import database_url

    settings = Settings()

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


@app.command()
def run(
    plan: Annotated[Path, typer.Argument(help="A pending_actions.json plan file.")],
    wait: Annotated[bool, typer.Option(help="Wait for the run to finish.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results JSON.")] = False,
    again: Annotated[bool, typer.Option(help="Start another run of a plan already run.")] = False,
    max_parallel: Annotated[int | None, typer.Option(min=1, max=64)] = None,
    policy_file: Annotated[Path | None, typer.Option("--policy", help="Run policy (JSON).")]
    = None,
    human_gate: Annotated[list[GateName] | None, typer.Option(
        "--human-gate", help="Make a gate (plan, step, error, result) wait for a person.")]
    = None,
    approver: Annotated[list[str] | None, typer.Option(help="Who may decide human gates.")]
    = None,
    gate_timeout: Annotated[float | None, typer.Option(min=1, help="Seconds a gate waits.")]
    = None,
    on_timeout: Annotated[OnTimeout | None, typer.Option(help="approve or reject.")]
    = None,
) -> None:
    """Validate a plan and start a run of it; with --wait, follow it to the end."""
    from workers.planfile import PlanFileError, load_plan
    from workers.runpolicy import PolicyError, build_policy, queues_from

    settings = Settings()
    try:
        policy = build_policy(settings, policy_file=policy_file, max_parallel=max_parallel,
                              human_gates=[g.kind for g in human_gate or []],
                              approvers=approver, gate_timeout_s=gate_timeout,
                              on_timeout=on_timeout.action if on_timeout else None)
        req = load_plan(plan, max_bytes=settings.max_plan_bytes, policy=policy,
                        queues=queues_from(settings))
    except (PlanFileError, PolicyError) as err:
        fail(str(err), EXIT_BAD_INPUT)

    async def go() -> None:
        client = await client_for(settings)
        run_id = await client.start_run(req, again=again)
        typer.echo(f"started {run_id}", err=True)
        if not wait:
            typer.echo(run_id)
            typer.echo(f"follow it with: assay watch {run_id}", err=True)
            return
        result = await _follow(client, run_id)
        if as_json:
            typer.echo(result.model_dump_json(indent=2))
        else:
            _print_outcome(result, settings)

    run_async(go())


async def _follow(client: Any, run_id: str) -> Any:
    """Await a run's result while printing task status changes to stderr."""
    waiter = asyncio.ensure_future(client.result(run_id))
    seen: dict[str, str] = {}

    def show(statuses: dict[str, str]) -> None:
        for tid, status in statuses.items():
            if seen.get(tid) != status:
                seen[tid] = status
                typer.echo(f"  task {tid}: {status}", err=True)

    while not waiter.done():
        with contextlib.suppress(Exception):  # progress is best effort; the result decides
            progress = await client.progress(run_id)
            show(dict(progress.tasks))
            if progress.waiting is not None and "plan" not in seen:
                seen["plan"] = "waiting"
                typer.echo(f"  plan gate waiting: assay approve {run_id} --gate plan", err=True)
        await asyncio.wait([waiter], timeout=1.0)
    result = waiter.result()
    show({t.task_id: t.status for t in result.tasks})
    return result


def _print_outcome(result: Any, settings: Settings) -> None:
    typer.echo(f"run {result.run_id}: {result.status}")
    for task in result.tasks:
        typer.echo(f"  task {task.task_id:<8} {task.status:<13} {task.status_reason}")
    if result.report is not None:
        typer.echo(f"report: {result.report.summary_md}")
        typer.echo(f"results: {result.report.results_json}")
    typer.echo(f"Web UI: http://127.0.0.1:{settings.temporal_ui_port}/namespaces/"
               f"{settings.temporal_namespace}/workflows/{result.run_id}")


@app.command()
def status(run_id: str,
           as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show a run's phase and the status of each task."""

    async def go() -> None:
        client = await client_for(Settings())
        progress = await client.progress(run_id)
        if as_json:
            typer.echo(progress.model_dump_json(indent=2))
            return
        typer.echo(f"run {progress.run_id}: {progress.status} (phase {progress.phase})")
        for tid in progress.order:
            typer.echo(f"  task {tid:<8} {progress.tasks.get(tid, 'pending')}")

    run_async(go())


@app.command()
def watch(run_id: str,
          follow: Annotated[bool, typer.Option(help="Keep watching until the run ends.")] = True,
          ) -> None:
    """Print a run's events as they are recorded."""
    from activities.store import EventStore, format_event
    from workers.stack import database_url

    settings = Settings()

    async def go() -> None:
        client = await client_for(settings)
        store = EventStore(database_url(settings, start=False))
        await store.open()
        after = 0
        try:
            while True:
                # Status first: once a run is seen finished, one more read drains its events.
                running = await client.status(run_id) == "running"
                while batch := await store.events_after(run_id, after):
                    for stored in batch:
                        typer.echo(format_event(stored))
                    after = batch[-1].seq
                if not (running and follow):
                    return
                await asyncio.sleep(0.5)
        finally:
            await store.close()

    run_async(go())


@app.command()
def report(run_id: str,
           as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Print a finished run's report (Markdown, or the results JSON)."""
    from activities.reports import render_markdown

    async def go() -> None:
        client = await client_for(Settings())
        if await client.status(run_id) == "running":
            fail(f"run {run_id} is still running; see `assay status {run_id}`")
        result = await client.result(run_id)
        typer.echo(result.model_dump_json(indent=2) if as_json else render_markdown(result))

    run_async(go())


@app.command()
def runs(limit: Annotated[int, typer.Option(min=1, max=1000)] = 20) -> None:
    """List recent runs."""

    async def go() -> None:
        client = await client_for(Settings())
        for summary in await client.list_runs(limit=limit):
            typer.echo(f"{summary.run_id:<60} {summary.status:<12} {summary.start_time}")

    run_async(go())


app.command()(approve)
app.command()(gates)


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
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
