"""A real S3 API on localhost for tests: moto's server mode, and a proxy that cuts bodies.

Offline and in process: :func:`s3_server` starts ``ThreadedMotoServer`` on a free port with a
bucket; :class:`CuttingProxy` forwards to it but closes each connection after a number of
response bytes, as a network that drops mid-transfer does.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
from moto.server import ThreadedMotoServer
from pydantic import SecretStr

from activities.artifacts.s3 import S3ArtifactStore, S3Options

BUCKET = "assay-test"
KEY_ID, SECRET = "testing-key", "testing-secret"
REGION = "us-east-1"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class S3Server:
    """A running moto S3 server with :data:`BUCKET` created."""

    endpoint: str
    server: ThreadedMotoServer

    def options(self, endpoint: str | None = None) -> S3Options:
        return S3Options(endpoint_url=endpoint or self.endpoint, region=REGION,
                         access_key_id=SecretStr(KEY_ID), secret_access_key=SecretStr(SECRET),
                         timeout_s=10, retries=1)

    def store(self, prefix: str = "", endpoint: str | None = None) -> S3ArtifactStore:
        return S3ArtifactStore(BUCKET, prefix, self.options(endpoint))

    def client(self) -> Any:  # boto3's client types are generated at run time
        make: Any = boto3.client  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        return make("s3", endpoint_url=self.endpoint, region_name=REGION,
                    aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET)

    def keys(self, prefix: str) -> list[str]:
        """The keys in the bucket below ``prefix``."""
        listed = self.client().list_objects_v2(Bucket=BUCKET, Prefix=prefix)
        return [str(entry["Key"]) for entry in listed.get("Contents", [])]

    def settings(self, prefix: str = "") -> dict[str, str]:
        """The settings fields of a pool using this store (for ``Settings.model_validate``)."""
        return {name.removeprefix("ASSAY_").lower(): value
                for name, value in self.env(prefix).items()}

    def env(self, prefix: str = "") -> dict[str, str]:
        """The settings (as environment variables) of a pool using this store."""
        return {"ASSAY_STORE_URL": f"s3://{BUCKET}/{prefix}".rstrip("/"),
                "ASSAY_STORE_ENDPOINT_URL": self.endpoint, "ASSAY_STORE_REGION": REGION,
                "ASSAY_STORE_ACCESS_KEY_ID": KEY_ID, "ASSAY_STORE_SECRET_ACCESS_KEY": SECRET}


@contextmanager
def s3_server() -> Generator[S3Server]:
    """Start moto's S3 server on a free localhost port, with the test bucket."""
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        running = S3Server(endpoint=f"http://127.0.0.1:{port}", server=server)
        running.client().create_bucket(Bucket=BUCKET)
        yield running
    finally:
        server.stop()


class CuttingProxy:
    """Forwards TCP to ``upstream`` and closes each connection after ``cut_after`` bytes back."""

    def __init__(self, upstream_port: int, cut_after: int) -> None:
        self._upstream = ("127.0.0.1", upstream_port)
        self._cut_after = cut_after
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.cuts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self._upstream)
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._back, args=(upstream, client), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass

    def _back(self, upstream: socket.socket, client: socket.socket) -> None:
        sent = 0
        try:
            while data := upstream.recv(65536):
                data = data[:max(0, self._cut_after - sent)]
                client.sendall(data)
                sent += len(data)
                if sent >= self._cut_after:
                    self.cuts += 1
                    break
        except OSError:
            pass
        for end in (client, upstream):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)  # a FIN now, though the other pump still reads
            end.close()
