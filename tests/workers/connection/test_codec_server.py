"""``assay codec-server``: the Web UI's remote codec endpoint, for the origins and people let in."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload

from client.assay import DATA_CONVERTER
from tests.support.e2e import ROOT
from tests.support.waiting import wait_for_blocking
from tests.workers.connection.codec_support import (
    UI_ORIGIN,
    call,
    codec_server,
    payloads_of,
    ui_body,
)
from tests.workers.stack.test_embedded import free_port
from workers.connection import EncryptionCodec, KeyRing
from workers.settings import Settings
from workers.stack.temporal import TemporalDevServer, port_open

KEY = base64.b64encode(b"k" * 32).decode()
OTHER = base64.b64encode(b"o" * 32).decode()
CODEC = EncryptionCodec(KeyRing.parse(f"k1={KEY}", source="test"))


def plain(text: str) -> Payload:
    return DATA_CONVERTER.payload_converter.to_payloads([text])[0]


async def test_the_ui_decodes_and_encodes_through_it() -> None:
    sealed = await CODEC.encode([plain("tapir-canary"), plain("second")])
    with codec_server(CODEC) as server:
        status, headers, answer = call(f"{server.url}/decode", body=ui_body(sealed),
                                       headers={"Content-Type": "application/json",
                                                "X-Namespace": "default"})
        assert status == 200 and headers["Access-Control-Allow-Origin"] == UI_ORIGIN
        assert payloads_of(answer) == [plain("tapir-canary"), plain("second")]
        status, _, answer = call(f"{server.url}/encode", body=ui_body([plain("x")]))
        [encoded] = payloads_of(answer)
        assert status == 200 and encoded.metadata["encryption-key-id"] == b"k1"
        assert await CODEC.decode([encoded]) == [plain("x")]


def test_the_preflight_admits_the_ui_origin_only() -> None:
    with codec_server(CODEC) as server:
        status, headers, _ = call(f"{server.url}/decode", method="OPTIONS", headers={
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type,x-namespace,authorization"})
        assert status == 204 and headers["Access-Control-Allow-Origin"] == UI_ORIGIN
        assert "Authorization" in headers["Access-Control-Allow-Headers"]
        status, headers, _ = call(f"{server.url}/decode", method="OPTIONS",
                                  headers={"Origin": "https://evil.example"})
        assert status == 403 and "Access-Control-Allow-Origin" not in headers


async def test_with_a_token_only_its_bearer_may_read() -> None:
    sealed = await CODEC.encode([plain("secret")])
    with codec_server(CODEC, token="s3cret") as server:
        for given in ({}, {"Authorization": "Bearer wrong"}):
            status, _, answer = call(f"{server.url}/decode", body=ui_body(sealed), headers=given)
            assert status == 401 and "Bearer" in answer["error"]
        status, _, answer = call(f"{server.url}/decode", body=ui_body(sealed),
                                 headers={"Authorization": "Bearer s3cret"})
        assert status == 200 and payloads_of(answer) == [plain("secret")]


async def test_a_payload_of_another_key_or_a_bad_body_is_a_named_error() -> None:
    foreign = EncryptionCodec(KeyRing.parse(f"k9={OTHER}", source="test"))
    sealed = await foreign.encode([plain("x")])
    with codec_server(CODEC) as server:
        status, _, answer = call(f"{server.url}/decode", body=ui_body(sealed))
        assert status == 422 and "encrypted with key 'k9'" in answer["error"]
        status, _, answer = call(f"{server.url}/decode", body=b"{not json")
        assert status == 400 and "not a JSON payloads body" in answer["error"]
        status, _, _ = call(f"{server.url}/other", body=ui_body([]))
        assert status == 404


def test_the_embedded_web_ui_is_pointed_at_the_codec_server_when_set(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, temporal_ui_codec_endpoint="http://127.0.0.1:8081")
    command = TemporalDevServer(settings).command()
    at = command.index("--ui-codec-endpoint")
    assert command[at + 1] == "http://127.0.0.1:8081"
    assert "--ui-codec-endpoint" not in TemporalDevServer(Settings(data_dir=tmp_path)).command()


@pytest.mark.integration
def test_the_cli_server_admits_the_web_ui_of_its_port_and_logs_each_origin_it_refuses(
        tmp_path: Path) -> None:
    port, ui_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")} | {
        "PYTHONPATH": str(ROOT), "ASSAY_DATA_DIR": str(tmp_path),
        "ASSAY_CODEC_KEYS": f"k1={KEY}", "ASSAY_TEMPORAL_UI_PORT": str(ui_port)}
    server = subprocess.Popen([sys.executable, "-m", "workers.cli", "codec-server", "--port",
                               str(port)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        wait_for_blocking(lambda: port_open("127.0.0.1", port), timeout=30,
                          what="the codec server")
        url = f"http://127.0.0.1:{port}/decode"
        for host in ("localhost", "127.0.0.1"):
            status, headers, _ = call(url, method="OPTIONS",
                                      headers={"Origin": f"http://{host}:{ui_port}"})
            assert status == 204
            assert headers["Access-Control-Allow-Origin"] == f"http://{host}:{ui_port}"
        status, _, answer = call(url, method="OPTIONS", headers={"Origin": UI_ORIGIN})
        assert status == 403 and UI_ORIGIN in answer["error"]  # 8233 is not this UI's port
        status, _, _ = call(url, body=ui_body([]), headers={"Origin": "https://evil.example"})
        assert status == 403
    finally:
        server.terminate()
        _, err = server.communicate(timeout=10)
    assert f"refused a request from origin {UI_ORIGIN}" in err
    assert "refused a request from origin https://evil.example" in err
