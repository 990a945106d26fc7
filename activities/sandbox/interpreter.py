"""Which interpreter a job runs with: the worker's own, or its provisioned environment's.

A job prepared into an environment (``ExecuteJobInput.environment``) runs with that
environment's ``bin/python``, and the environment's directory joins the read-only prefixes
bubblewrap binds. A host that lacks the environment provisions it here from the recorded pins
(same digest, so the same packages), heartbeating meanwhile.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

from temporalio.exceptions import ApplicationError

from activities.environments import EnvironmentProblem, Environments
from activities.sandbox.command import Tools
from workflows.contracts.environments import PreparedEnvironment
from workflows.contracts.errors import ErrorType


async def job_tools(tools: Tools, prepared: PreparedEnvironment | None,
                    environments: Environments | None, *, heartbeat_every_s: float,
                    heartbeat: Callable[..., Any]) -> Tools:
    """``tools`` with the job's interpreter and its environment's directory, if it has one."""
    if prepared is None or not prepared.provisioned:
        return tools
    if environments is None:
        raise ApplicationError(f"this sandbox worker has no environments directory, so it "
                               f"cannot run a job in {prepared.label()}",
                               type=ErrorType.SANDBOX_UNAVAILABLE, non_retryable=True)
    work = asyncio.ensure_future(environments.ensure(prepared))
    try:
        while not work.done():
            await asyncio.wait([work], timeout=heartbeat_every_s)
            if not work.done():
                heartbeat(phase="environment", environment=prepared.label())
        path = work.result()
    except EnvironmentProblem as problem:
        raise ApplicationError(problem.reason, type=ErrorType.ENVIRONMENT_REFUSED,
                               non_retryable=True) from problem
    finally:
        work.cancel()  # a no-op once done; stops an install whose activity was cancelled
    return dataclasses.replace(tools, python=environments.interpreter(path),
                               prefixes=(*tools.prefixes, str(path)))
