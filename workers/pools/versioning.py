"""Worker versioning: the Worker Deployment version each worker polls as, and its routing.

Every worker polls as a version of one Temporal Worker Deployment (``settings.deployment_name``)
whose build id names the workflow code it runs: the package version and a digest of the
source of ``workflows/`` (``settings.build_id`` overrides it). Workflows that can wait on
people for days are pinned to the version that started them, so new code never replays an
old history; the long-lived skill library moves to the current version (each pool's
``PoolSpec.versioning``; see the documentation's Architecture page (Design), "Worker
versioning"). A version receives new workflows once it is the deployment's current
version: :func:`promote` makes it so, always (the embedded stack) or only when the
deployment has none yet (a first deployment; later versions are promoted by an operator).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from temporalio.api.deployment import v1 as deployment
from temporalio.api.enums.v1 import VersionDrainageStatus, WorkerDeploymentVersionStatus
from temporalio.api.workflowservice.v1 import (
    DescribeWorkerDeploymentRequest,
    DescribeWorkerDeploymentVersionRequest,
    SetWorkerDeploymentCurrentVersionRequest,
)
from temporalio.client import Client
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import WorkerDeploymentConfig

import workflows
from workers.settings import Settings
from workflows.constants import digest

log = logging.getLogger("assay.workers")

SOURCE_ROOT = Path(workflows.__file__).resolve().parent
"""The workflow code whose digest is in the build id: everything a workflow replays."""
SET_CURRENT_TIMEOUT_S = 30.0
"""How long a starting worker waits for the server to know its version before promoting it."""
BUSY_TIMEOUT_S = 10.0
"""How long a question about a deployment is asked again while the server says it is busy
(its workers' first polls register their queues, one change at a time) or gives it up (the
server asks the deployment's own workflow, and under load that question can be cancelled)."""
BUSY = frozenset({RPCStatusCode.RESOURCE_EXHAUSTED, RPCStatusCode.CANCELLED})
"""What a busy server answers a question about a deployment: ask again."""


def source_digest(root: Path = SOURCE_ROOT) -> str:
    """The sha256 of the Python source under ``root``: each file's relative path and bytes."""
    parts: list[bytes] = []
    for path in sorted(root.rglob("*.py")):
        parts += [path.relative_to(root).as_posix().encode(), b"\0", path.read_bytes(), b"\0"]
    return digest(b"".join(parts))


def package_version() -> str:
    """Assay's installed version (``0`` when it runs from a source tree not installed)."""
    try:
        return metadata.version("assay")
    except metadata.PackageNotFoundError:
        return "0"


def build_id(settings: Settings) -> str:
    """The build id workers poll with: ``settings.build_id``, else ``<version>-<digest[:12]>``."""
    return settings.build_id or f"{package_version()}-{source_digest()[:12]}"


def deployment_version(settings: Settings) -> WorkerDeploymentVersion | None:
    """The version this process's workers poll as, or ``None`` with versioning off."""
    if not settings.worker_versioning:
        return None
    return WorkerDeploymentVersion(settings.deployment_name, build_id(settings))


def deployment_config(version: WorkerDeploymentVersion | None,
                      behavior: VersioningBehavior = VersioningBehavior.UNSPECIFIED,
                      ) -> WorkerDeploymentConfig | None:
    """The SDK's worker option for ``version``, its workflows' behaviour ``behavior``."""
    if version is None:
        return None
    return WorkerDeploymentConfig(version=version, use_worker_versioning=True,
                                  default_versioning_behavior=behavior)


def set_current_mode(settings: Settings) -> str:
    """When this worker makes its version current (``if-none`` unless settings say)."""
    return settings.deployment_set_current or "if-none"


def describe_version(settings: Settings) -> str:
    """One line saying which version a worker runs as, for its start-up output."""
    version = deployment_version(settings)
    if version is None:
        return "worker versioning off (ASSAY_WORKER_VERSIONING=false): unversioned workers"
    return (f"deployment {version.deployment_name}, build id {version.build_id} "
            f"(sets current version: {set_current_mode(settings)})")


@dataclass(frozen=True)
class Routing:
    """Where a deployment sends new workflows: its current and ramping versions' build ids."""

    current: str | None = None
    ramping: str | None = None
    ramp_percentage: float = 0.0

    def role(self, build: str) -> str:
        """``current``, ``ramping N %`` or ``not current`` for the version ``build``."""
        if build == self.current:
            return "current"
        if build == self.ramping:
            return f"ramping {self.ramp_percentage:g} %"
        return "not current"


async def routing(client: Client, deployment: str) -> Routing:
    """The deployment's routing; empty for a deployment the server does not know yet.

    Raises:
        RPCError: the server does not answer, offers no Worker Deployments, or stayed busy
            for ``BUSY_TIMEOUT_S``.
    """
    request = DescribeWorkerDeploymentRequest(namespace=client.namespace,
                                              deployment_name=deployment)
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            resp = await client.workflow_service.describe_worker_deployment(request)
            break
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                return Routing()
            if err.status not in BUSY or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.5)
    config = resp.worker_deployment_info.routing_config
    return Routing(current=config.current_deployment_version.build_id or None,
                   ramping=config.ramping_deployment_version.build_id or None,
                   ramp_percentage=config.ramping_version_percentage)


async def set_current(client: Client, version: WorkerDeploymentVersion, *, only_if_none: bool,
                      timeout: float = SET_CURRENT_TIMEOUT_S) -> bool:
    """Make ``version`` its deployment's current version; whether this call changed it.

    The server learns a version from its workers' first polls, so a version not known yet (or
    a deployment busy with other changes) is asked for again until ``timeout``. With
    ``only_if_none`` a deployment that already has a current version keeps it.

    Raises:
        RPCError: the server refused (e.g. versioning is off there), or still did not know the
            version after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            current = (await routing(client, version.deployment_name)).current
            if current == version.build_id or (only_if_none and current is not None):
                return False
            await client.workflow_service.set_worker_deployment_current_version(
                SetWorkerDeploymentCurrentVersionRequest(
                    namespace=client.namespace, deployment_name=version.deployment_name,
                    build_id=version.build_id, identity=client.identity))
            return True
        except RPCError as err:
            retry = err.status in {RPCStatusCode.NOT_FOUND, RPCStatusCode.FAILED_PRECONDITION,
                                   *BUSY}
            if not retry or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.5)


async def promote(client: Client, settings: Settings) -> None:
    """Make this worker's version current as ``settings.deployment_set_current`` asks.

    With versioning off and ``always`` (the embedded stack), a deployment that had a current
    version sends its new workflows to unversioned workers again.

    Raises:
        RPCError: see :func:`set_current`.
    """
    version, when = deployment_version(settings), set_current_mode(settings)
    if version is None:
        if when == "always":
            await _unversion(client, settings.deployment_name)
        return
    if when != "never" and await set_current(client, version,
                                             only_if_none=when == "if-none"):
        log.info("version %s is now current", version.to_canonical_string())


async def _unversion(client: Client, deployment: str) -> None:
    """Send the deployment's new workflows to unversioned workers again.

    For versioning turned off where a version had been current; a server without Worker
    Deployments has nothing to change.
    """
    try:
        if (await routing(client, deployment)).current is None:
            return
    except RPCError:  # a server without Worker Deployments: nothing routes by version
        return
    await client.workflow_service.set_worker_deployment_current_version(
        SetWorkerDeploymentCurrentVersionRequest(
            namespace=client.namespace, deployment_name=deployment, build_id="",
            identity=client.identity))
    log.info("deployment %s: new workflows go to unversioned workers", deployment)


@dataclass(frozen=True)
class VersionState:
    """One version of a deployment as the server reports it."""

    status: str
    """``inactive``, ``current``, ``ramping``, ``draining`` or ``drained``."""
    drainage: str | None
    """``draining`` (pinned workflows still open) or ``drained``, once the server checked."""


async def version_state(client: Client, version: WorkerDeploymentVersion) -> VersionState:
    """What the server says of ``version``: its status and drainage.

    Raises:
        RPCError: the server does not know the version, or offers no Worker Deployments.
    """
    info = (await client.workflow_service.describe_worker_deployment_version(
        DescribeWorkerDeploymentVersionRequest(
            namespace=client.namespace, deployment_version=deployment.WorkerDeploymentVersion(
                deployment_name=version.deployment_name, build_id=version.build_id)))
            ).worker_deployment_version_info
    drainage = (VersionDrainageStatus.Name(info.drainage_info.status)
                if info.HasField("drainage_info") else None)
    return VersionState(
        status=WorkerDeploymentVersionStatus.Name(info.status)
        .removeprefix("WORKER_DEPLOYMENT_VERSION_STATUS_").lower(),
        drainage=(drainage.removeprefix("VERSION_DRAINAGE_STATUS_").lower()
                  if drainage else None))
