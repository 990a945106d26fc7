"""What every ``assay`` command shares: exit codes, options, tables, stores and the client.

Commands print for people and for scripts alike: a table is drawn with rich on a terminal
and printed as plain aligned columns otherwise, so piped output stays stable to parse.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer

from workers.settings import Settings
from workflows.contracts.pools import Pool

if TYPE_CHECKING:
    from client.assay import AssayClient
    from database.engine import Database

T = TypeVar("T")
D = TypeVar("D", bound="Database")

EXIT_FAILED = 1
"""The command could not do what it was asked (unknown run, refused decision, ...)."""
EXIT_BAD_INPUT = 2
"""The input was refused before anything started (plan, goal, data, flags)."""
EXIT_UNAVAILABLE = 3
"""Temporal cannot be reached."""
EXIT_OUTCOME: dict[str, int] = {"completed": 0, "partial": 4, "failed": 5, "rejected": 6,
                                "deferred": 7}
"""How ``assay run --wait`` exits once the run has ended, by the run's status."""
EXIT_STOPPED = 8
"""``assay run --wait``: the run was cancelled, terminated or timed out (it has no result)."""


def outcome_exit(status: str) -> int:
    """The exit code of ``assay run --wait`` for a run that ended with ``status``."""
    return EXIT_OUTCOME.get(status, EXIT_FAILED)


def stopped_exit(temporal_status: str) -> int:
    """The exit code for a run Temporal ended without a result; 0 for any other run.

    Terminated, timed out or cancelled: :data:`EXIT_STOPPED`; failed: :data:`EXIT_FAILED`.
    """
    if temporal_status in ("terminated", "timed_out", "canceled"):
        return EXIT_STOPPED
    return EXIT_FAILED if temporal_status == "failed" else 0

ByOption = Annotated[str | None, typer.Option("--by", help="Who makes the change "
                                              "(default: you).")]


def fail(message: str, code: int = EXIT_FAILED) -> NoReturn:
    """Print an error to stderr and exit with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine, turning unreachable services into a clear message."""
    try:
        return asyncio.run(coro)
    except Exception as err:
        explain(err)
        raise


def explain(err: Exception) -> None:
    """End the command with what ``err`` means for the user, if it is one that says.

    The error types of Temporal and the client are loaded only here, once something failed:
    a command that never talks to Temporal does not pay for importing them.
    """
    from temporalio.client import WorkflowFailureError, WorkflowQueryFailedError
    from temporalio.service import RPCError

    from client.assay import RunExistsError, RunNotFoundError
    from workers.connection.codec import ENCODING, CodecKeyError
    from workers.stack.process import StackError
    from workflows.common.failures import root_message

    if isinstance(err, (RunExistsError, RunNotFoundError, StackError, CodecKeyError)):
        fail(str(err))
    if isinstance(err, KeyError) and ENCODING.decode() in str(err):
        fail("this namespace's payloads are encrypted and no payload key is set: set "
             "ASSAY_CODEC_KEYS or ASSAY_CODEC_KEY_FILE as the workers have them")
    if isinstance(err, WorkflowFailureError):
        fail(f"the run ended without a result: {root_message(err)}; see `{describe_command()}` "
             "for its history")
    if isinstance(err, WorkflowQueryFailedError):
        fail(f"the run could not answer: {err}; see `{describe_command()}` for its pending "
             "workflow task and the worker's log for why")
    if isinstance(err, RPCError):
        fail(f"Temporal refused the request: {err.message}")
    if isinstance(err, RuntimeError) and (
            "connect" in str(err).lower() or "transport" in str(err).lower()):
        fail(f"cannot reach Temporal: {err}\nIs the stack running? Start it with "
             "`assay up` (or set ASSAY_TEMPORAL_ADDRESS).", EXIT_UNAVAILABLE)


async def gather_bounded(calls: Sequence[Awaitable[T]], limit: int) -> list[T]:
    """The results of ``calls`` in their order, at most ``limit`` of them running at once."""
    gate = asyncio.Semaphore(limit)

    async def one(call: Awaitable[T]) -> T:
        async with gate:
            return await call

    return list(await asyncio.gather(*(one(call) for call in calls)))


def describe_command(run_id: str = "<run>") -> str:
    """The ``temporal`` command that shows a run, pointed at the server Assay uses."""
    settings = Settings()
    return (f"temporal workflow describe --address {settings.temporal_address} --namespace "
            f"{settings.temporal_namespace} --workflow-id {run_id}")


async def client_for(settings: Settings) -> AssayClient:
    """The typed client, connected as settings say."""
    from client.assay import AssayClient
    from workers.connection import connect

    client = await connect(settings)
    return AssayClient(client, task_queue=settings.queue(Pool.ORCHESTRATION))


def with_database(store: Callable[[str], D], use: Callable[[D], Awaitable[T]], *,
                  failed: tuple[type[Exception], ...] = (),
                  refused: tuple[type[Exception], ...] = ()) -> T:
    """Run ``use`` against a store of the configured database, opened and closed around it.

    An unreachable database ends the command with exit code 3, an error in ``failed`` with 1
    and one in ``refused`` (bad input) with 2, each with its message.
    """
    from database.engine import DatabaseUnavailable
    from workers.stack.embedded import database_url  # not the launcher: Temporal's side

    async def go() -> T:
        opened = store(database_url(Settings(), start=False))
        try:
            await opened.open()
            return await use(opened)
        except DatabaseUnavailable as err:
            fail(str(err), EXIT_UNAVAILABLE)
        except failed as err:
            fail(str(err))
        except refused as err:
            fail(str(err), EXIT_BAD_INPUT)
        finally:
            await opened.close()

    return run_async(go())


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as aligned text columns under a header line."""
    widths = [max([len(head), *(len(row[i]) for row in rows)]) for i, head in enumerate(headers)]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            .rstrip() for row in (headers, *rows)]


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Print rows under a header: a rich table on a terminal, :func:`table`'s lines otherwise."""
    if not sys.stdout.isatty():
        for line in table(headers, rows):
            typer.echo(line)
        return
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    drawn = Table(*headers, box=box.SIMPLE_HEAD, header_style="bold")
    for row in rows:
        drawn.add_row(*(Text(cell) for cell in row))  # Text: a cell's brackets are not markup
    Console().print(drawn)


def when(moment: datetime | None) -> str:
    """A time to the second, or ``-``."""
    return moment.isoformat(timespec="seconds") if moment else "-"
