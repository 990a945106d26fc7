"""The Temporal Web UI's remote codec endpoint: ``POST /decode`` and ``/encode``.

The UI (``temporal server start-dev --ui-codec-endpoint URL``, or the Codec Server setting of
a Cloud namespace) sends the payloads it shows to ``URL/decode`` as JSON (``{"payloads":
[...]}``, each payload in protobuf's JSON form) from the person's browser, so the endpoint
answers the UI's origins only (CORS) and, with a token set, only requests that carry it
(``Authorization: Bearer TOKEN``, which the UI passes on when told to). Keys stay in this
process; nothing decoded is logged.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread

from google.protobuf import json_format
from temporalio.api.common.v1 import Payloads

from workers.connection.codec import CodecKeyError, EncryptionCodec

MAX_BODY_BYTES = 16 * 1024 * 1024
ALLOWED_HEADERS = "Content-Type, X-Namespace, Authorization, Caller-Type"
log = logging.getLogger("assay.codec")


class CodecServer(ThreadingHTTPServer):
    """An HTTP server answering the UI's codec requests with ``codec``."""

    daemon_threads = True

    def __init__(self, codec: EncryptionCodec, *, host: str, port: int,
                 origins: Sequence[str], token: str | None) -> None:
        super().__init__((host, port), _Handler)
        self.codec = codec
        self.origins = frozenset(o.rstrip("/") for o in origins)
        self.token = token

    @property
    def url(self) -> str:
        """Where the UI should send its requests (``--ui-codec-endpoint``)."""
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Thread:
        """Serve from a background thread (for tests and embedding); ``shutdown()`` stops it."""
        thread = Thread(target=self.serve_forever, name="codec-server", daemon=True)
        thread.start()
        return thread


class _Handler(BaseHTTPRequestHandler):
    server: CodecServer  # pyright: ignore[reportIncompatibleVariableOverride]

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def do_OPTIONS(self) -> None:
        if self._origin() is None:
            self._refuse_origin()
            return
        self.send_response(HTTPStatus.NO_CONTENT)
        self._cors()
        self.send_header("Access-Control-Allow-Methods", "POST, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", ALLOWED_HEADERS)
        self.send_header("Access-Control-Max-Age", "600")
        self.end_headers()

    def do_POST(self) -> None:
        if self.headers.get("Origin") is not None and self._origin() is None:
            self._refuse_origin()  # a browser page of another origin: never answered
            return
        action = self.path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        if action not in ("encode", "decode"):
            self._reply(HTTPStatus.NOT_FOUND, {"error": "POST /encode or /decode"})
            return
        if not self._authorized():
            self._reply(HTTPStatus.UNAUTHORIZED,
                        {"error": "this codec server needs 'Authorization: Bearer TOKEN'"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self._reply(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                        {"error": f"a request may carry at most {MAX_BODY_BYTES} bytes"})
            return
        try:
            payloads = json_format.Parse(self.rfile.read(length), Payloads())
        except (json_format.ParseError, UnicodeDecodeError) as err:
            self._reply(HTTPStatus.BAD_REQUEST, {"error": f"not a JSON payloads body: {err}"})
            return
        codec = self.server.codec
        run = codec.encode if action == "encode" else codec.decode
        try:
            done = asyncio.run(run(list(payloads.payloads)))
        except CodecKeyError as err:
            self._reply(HTTPStatus.UNPROCESSABLE_ENTITY, {"error": str(err)})
            return
        self._reply(HTTPStatus.OK, json_format.MessageToDict(Payloads(payloads=done)))

    def _origin(self) -> str | None:
        origin = (self.headers.get("Origin") or "").rstrip("/")
        return origin if origin in self.server.origins else None

    def _refuse_origin(self) -> None:
        origin = self.headers.get("Origin") or "(none)"
        log.warning("refused a request from origin %s: it is not one of ASSAY_CODEC_ORIGINS "
                    "(%s); add it there if the Web UI is served from it",
                    origin[:200], ", ".join(sorted(self.server.origins)))
        self._reply(HTTPStatus.FORBIDDEN, {"error": f"origin {origin[:200]} may not use the "
                                                    "codec: it is not in ASSAY_CODEC_ORIGINS"})

    def _authorized(self) -> bool:
        token = self.server.token
        if token is None:
            return True
        given = self.headers.get("Authorization") or ""
        return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())

    def _cors(self) -> None:
        origin = self._origin()
        if origin is not None:
            self.send_header("Access-Control-Allow-Origin", origin)
            self.send_header("Access-Control-Allow-Credentials", "true")
            self.send_header("Vary", "Origin")

    def _reply(self, status: HTTPStatus, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self._cors()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
