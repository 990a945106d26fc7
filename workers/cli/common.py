"""What every ``assay`` command shares: exit codes, error output and the connected client."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer

from workers.settings import Settings
from workflows.constants import Pool

if TYPE_CHECKING:
    from workflows.client import AssayClient

T = TypeVar("T")

EXIT_FAILED = 1
"""The command could not do what it was asked (unknown run, refused decision, ...)."""
EXIT_BAD_INPUT = 2
"""The input was refused before anything started (plan, goal, data, flags)."""
EXIT_UNAVAILABLE = 3
"""Temporal cannot be reached."""


def fail(message: str, code: int = EXIT_FAILED) -> NoReturn:
    """Print an error to stderr and exit with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine, turning unreachable services into a clear message."""
    from temporalio.client import WorkflowFailureError
    from temporalio.service import RPCError

    from workers.stack.process import StackError
    from workflows.client import RunExistsError, RunNotFoundError
    from workflows.common.failures import root_message

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
