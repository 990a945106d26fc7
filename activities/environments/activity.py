"""The ``prepare_environment`` activity, and which jobs need an environment at all.

A job that names no environment and whose requirements the worker's interpreter already
meets runs there, as jobs always have (so plans that pin ``numpy`` need no network). Any other
job gets its environment resolved and provisioned here, before it runs, on the sandbox pool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from packaging.requirements import Requirement
from temporalio.exceptions import ApplicationError

from activities.common.heartbeat import Heartbeats
from activities.environments.errors import EnvironmentProblem
from activities.environments.store import Environments
from workflows.catalogue import PREPARE_ENVIRONMENT
from workflows.contracts.environments import (
    BASE,
    PreparedEnvironment,
    PrepareEnvironmentInput,
)
from workflows.contracts.errors import ErrorType

BaseVersions = Callable[[list[str]], Awaitable[dict[str, str | None]]]
"""Installed version (or None) of each named distribution in the worker's interpreter."""


async def runs_in_base(environment: str | None, requirements: list[str],
                       base_versions: BaseVersions) -> bool:
    """Whether a job runs in the worker's own interpreter (no environment to provision)."""
    if environment not in (None, BASE):
        return False
    wanted = [Requirement(text) for text in requirements]
    wanted = [r for r in wanted if r.marker is None or r.marker.evaluate()]
    if not wanted:
        return True
    installed = await base_versions([r.name for r in wanted])
    for requirement in wanted:
        version = installed.get(requirement.name)
        if version is None or not requirement.specifier.contains(version, prereleases=True):
            return False
    return True


def refusal(problem: EnvironmentProblem) -> ApplicationError:
    """The activity error for ``problem``: retried only if the index was unreachable."""
    unreachable = problem.kind == "unreachable"
    return ApplicationError(
        problem.reason, problem.kind,
        type=ErrorType.ENVIRONMENT_UNREACHABLE if unreachable else ErrorType.ENVIRONMENT_REFUSED,
        non_retryable=not unreachable)


class EnvironmentPreparer:
    """Prepares job environments for the sandbox pool; one instance per worker.

    Args:
        environments: this host's environments.
        base_versions: asks the worker's interpreter for installed versions.
        heartbeat_every_s: heartbeat interval while installing.
    """

    def __init__(self, environments: Environments, base_versions: BaseVersions, *,
                 heartbeat_every_s: float = 5.0) -> None:
        self.environments = environments
        self._base_versions = base_versions
        self._heartbeat_every_s = heartbeat_every_s

    @PREPARE_ENVIRONMENT.defn
    async def prepare_environment(self, req: PrepareEnvironmentInput) -> PreparedEnvironment:
        """Resolve and provision the job's environment (or say it runs in ``base``)."""
        beats = Heartbeats(self._heartbeat_every_s)
        name = None if req.environment == BASE else req.environment
        said = {"phase": "provisioning", "environment": name or "custom"}
        if await beats.during(runs_in_base(req.environment, req.requirements,
                                           self._base_versions), **said):
            return PreparedEnvironment()
        try:
            return await beats.during(self.environments.prepare(name, req.requirements), **said)
        except EnvironmentProblem as problem:
            raise refusal(problem) from problem
