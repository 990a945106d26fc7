"""Whose Temporal this is: the data directory and store of the stack that serves a namespace.

``assay up`` writes its data directory and the artifact store its workers read into the
namespace's ``data`` map (``UpdateNamespace``), so anyone who connects can tell which stack
answers: a second ``assay up`` of another data directory on the same port refuses to join it,
and ``assay run`` refuses to put inputs in a store that stack's workers do not read. A
namespace no ``assay up`` claimed (a cluster served by ``assay worker``) records nothing, and
nothing is refused there.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from temporalio.api.namespace.v1 import UpdateNamespaceInfo
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest, UpdateNamespaceRequest
from temporalio.client import Client

from workers.connection.connect import connect
from workers.settings import Settings

DATA_DIR_KEY = "assay.data_dir"
STORE_KEY = "assay.store"


class StoreMismatchError(RuntimeError):
    """The workers that answer read another store than the one this process would write."""


@dataclass(frozen=True)
class StackIdentity:
    """The data directory of a stack and where its workers read inputs from."""

    data_dir: str
    store: str

    @classmethod
    def of(cls, settings: Settings) -> StackIdentity:
        """The identity a stack run with ``settings`` has."""
        return cls(data_dir=str(settings.root), store=store_location(settings))


def store_location(settings: Settings) -> str:
    """The artifact store settings name, as one comparable string.

    A local store is its absolute directory (``file:///path`` or ``<data dir>/store``); an
    S3 store is its URL, with its endpoint when one is set.
    """
    url = settings.store_url or ""
    if url.startswith("s3:"):
        endpoint = settings.store_endpoint_url
        return f"{url.rstrip('/')} at {endpoint}" if endpoint else url.rstrip("/")
    if url:
        return str(Path(unquote(urlsplit(url).path)).resolve())
    return str(settings.store_dir)


async def claimed(client: Client) -> StackIdentity | None:
    """The stack recorded in ``client``'s namespace, or None when no ``assay up`` claimed it."""
    resp = await client.workflow_service.describe_namespace(
        DescribeNamespaceRequest(namespace=client.namespace))
    data = dict(resp.namespace_info.data)
    if DATA_DIR_KEY not in data:
        return None
    return StackIdentity(data_dir=data[DATA_DIR_KEY], store=data.get(STORE_KEY, ""))


async def claim(client: Client, settings: Settings) -> None:
    """Record ``settings``' stack as the one serving ``client``'s namespace."""
    mine = StackIdentity.of(settings)
    await client.workflow_service.update_namespace(UpdateNamespaceRequest(
        namespace=client.namespace,
        update_info=UpdateNamespaceInfo(data={DATA_DIR_KEY: mine.data_dir,
                                               STORE_KEY: mine.store})))


def other_stack_message(settings: Settings, other: StackIdentity) -> str:
    """Why ``assay up`` of ``settings`` may not join the stack ``other`` on the same port."""
    return (f"Temporal at {settings.temporal_address} (namespace "
            f"{settings.temporal_namespace}) serves the Assay stack of data directory "
            f"{other.data_dir}, not this one ({settings.root}). Use that stack "
            f"(ASSAY_DATA_DIR={other.data_dir}), stop it (`ASSAY_DATA_DIR={other.data_dir} assay "
            "down`), or give this stack ports of its own, e.g. "
            "ASSAY_TEMPORAL_ADDRESS=127.0.0.1:7243 ASSAY_TEMPORAL_UI_PORT=8243 (on a shared "
            "cluster: a namespace of its own, ASSAY_TEMPORAL_NAMESPACE)")


async def check_store(client: Client, settings: Settings) -> None:
    """Make sure the stack serving ``client``'s namespace reads the store ``settings`` name.

    Call it before putting a run's inputs in the store: inputs put anywhere else would be
    missing when the run's tasks look for them.

    Raises:
        StoreMismatchError: the namespace's stack reads another store; the message names both
            and how to point this process at the right one.
    """
    other = await claimed(client)
    mine = store_location(settings)
    if other is None or not other.store or other.store == mine:
        return
    raise StoreMismatchError(
        f"the stack that answers at {settings.temporal_address} (data directory "
        f"{other.data_dir}) reads inputs from {other.store}, but this command would put them "
        f"in {mine}, where its workers would not find them; nothing was started. Set "
        f"ASSAY_DATA_DIR={other.data_dir} (or the same ASSAY_STORE_URL as that stack), or "
        "point ASSAY_TEMPORAL_ADDRESS at this data directory's own stack")


async def refuse_other_store(settings: Settings, timeout: float = 5.0) -> None:
    """:func:`check_store` against the Temporal settings name, when it answers.

    When it does not answer nothing is checked: starting the run then says so.

    Raises:
        StoreMismatchError: as :func:`check_store`.
    """
    host, _, port = settings.temporal_address.rpartition(":")
    try:
        # A plain TCP probe first: the client's own connect retries for seconds.
        _, writer = await asyncio.wait_for(asyncio.open_connection(host.strip("[]"), port), 2.0)
        writer.close()
        client = await asyncio.wait_for(connect(settings), timeout)
    except (RuntimeError, TimeoutError, OSError, ValueError):
        return
    await check_store(client, settings)
