"""Calling a codec server as the Temporal Web UI does: JSON payloads from a browser origin."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Generator
from contextlib import contextmanager
from typing import Any

from google.protobuf import json_format
from temporalio.api.common.v1 import Payload, Payloads

from workers.connection import EncryptionCodec
from workers.connection.codec_server import CodecServer

UI_ORIGIN = "http://localhost:8233"


@contextmanager
def codec_server(codec: EncryptionCodec, token: str | None = None) -> Generator[CodecServer]:
    """A codec server on a free port for the body's duration."""
    server = CodecServer(codec, host="127.0.0.1", port=0, origins=[UI_ORIGIN], token=token)
    thread = server.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def call(url: str, *, method: str = "POST", body: bytes = b"",
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], Any]:
    """Status, headers and JSON body (or None) of one request; errors are answers too."""
    request = urllib.request.Request(url, data=body if method == "POST" else None,
                                     method=method, headers={"Origin": UI_ORIGIN,
                                                             **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            raw = answer.read()
            return answer.status, dict(answer.headers), json.loads(raw) if raw else None
    except urllib.error.HTTPError as err:
        raw = err.read()
        return err.code, dict(err.headers), json.loads(raw) if raw else None


def ui_body(payloads: list[Payload]) -> bytes:
    """The body the Web UI posts: ``{"payloads": [...]}`` in protobuf's JSON form."""
    return json_format.MessageToJson(Payloads(payloads=payloads)).encode()


def payloads_of(answer: Any) -> list[Payload]:
    """The payloads of a codec server's JSON answer."""
    return list(json_format.ParseDict(answer, Payloads()).payloads)
