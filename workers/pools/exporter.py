"""One metrics endpoint per worker process: Assay's registry and the Temporal SDK's metrics.

The SDK's Prometheus exporter binds a port of its own and cannot take other metrics, so the
worker's runtime gives it a free port on the loopback interface, and :class:`MetricsExporter`
serves ``settings.metrics_port`` itself: each scrape answers Assay's registry
(``activities.metrics.definitions``) followed by the SDK's text, read from that loopback
port. Both are Prometheus text format 0.0.4 and their names never meet (``temporal_*`` and
the gateway's ``assay_model_*`` come from the SDK, every other ``assay_*`` from the
registry), so the two parts read as one exposition; deployments scrape one port as before.
An SDK endpoint that cannot be read leaves a comment saying so, and Assay's part still
answers. ``/healthz`` answers what the process knows of itself
(``workers.pools.health.HEALTH``): 200 when its workers run and the Temporal server answered
lately, 503 otherwise, each with a JSON account; that is what health checks ask.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry, generate_latest

from workers.pools.health import HEALTH, WorkerHealth

log = logging.getLogger("assay.metrics")

SDK_READ_TIMEOUT_S = 5.0
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""Prometheus text format 0.0.4: what both parts are written in."""
PATHS = ("/metrics", "/")
HEALTH_PATH = "/healthz"


def free_loopback_port() -> int:
    """A TCP port free on 127.0.0.1 just now (for the SDK's exporter, behind this one)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class MetricsExporter:
    """Serves ``registry`` and the text at ``sdk_url`` on ``port`` until :meth:`close`.

    Args:
        port: the worker's metrics port.
        sdk_url: the SDK exporter's loopback URL (None: Assay's metrics alone).
        registry: the metrics of Assay's own.
        host: the address to bind (``settings.metrics_host``; loopback unless told).
        health: what ``/healthz`` answers from.

    Raises:
        OSError: the port cannot be bound (e.g. ``Address already in use``).
    """

    def __init__(self, port: int, sdk_url: str | None, registry: CollectorRegistry, *,
                 host: str = "127.0.0.1", health: WorkerHealth = HEALTH) -> None:
        self.sdk_url = sdk_url
        self.health = health
        self.registry = registry
        self._server = ThreadingHTTPServer((host, port), _handler(self))
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name=f"assay-metrics-{self.port}", daemon=True)
        self._thread.start()

    def exposition(self) -> bytes:
        """What one scrape answers: Assay's metrics, then the SDK's."""
        body = generate_latest(self.registry)
        if self.sdk_url is None:
            return body
        try:
            with urllib.request.urlopen(self.sdk_url, timeout=SDK_READ_TIMEOUT_S) as resp:
                sdk = resp.read()
        except OSError as err:
            log.warning("the Temporal SDK's metrics at %s could not be read: %s",
                        self.sdk_url, err)
            reason = str(err).replace("\n", " ")
            return body + f"# the Temporal SDK's metrics could not be read: {reason}\n".encode()
        return body + (sdk if sdk.endswith(b"\n") or not sdk else sdk + b"\n")

    def close(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _handler(exporter: MetricsExporter) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == HEALTH_PATH:
                healthy, account = exporter.health.account()
                self._answer(200 if healthy else 503, json.dumps(account).encode(),
                             "application/json")
                return
            if path not in PATHS:
                self.send_error(404, "metrics are at /metrics, health at /healthz")
                return
            self._answer(200, exporter.exposition(), CONTENT_TYPE)

        def _answer(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            """Scrapes are not worth a log line each."""

    return Handler
