"""Settings for a secured Temporal, and the one connect helper that uses them.

The dev server has no TLS of its own, so mutual TLS is tested through a TLS-terminating
proxy in front of it (``tls_support.py``); an API key is checked as the client is built.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.service import TLSConfig
from temporalio.testing import WorkflowEnvironment

from tests.support.e2e import ROOT
from tests.workers.connection.tls_support import SERVER_NAME, make_pki, tls_proxy
from workers.connection import connect, connect_options
from workers.settings import Settings


@pytest.mark.parametrize("setting", ["temporal_tls_cert", "temporal_tls_key",
                                     "temporal_tls_ca", "codec_key_file"])
def test_a_missing_file_is_refused_naming_its_setting(setting: str, tmp_path: Path) -> None:
    paired = {"temporal_tls_cert": "temporal_tls_key", "temporal_tls_key": "temporal_tls_cert"}
    other = {paired[setting]: tmp_path} if setting in paired else {}
    (tmp_path / "real.pem").write_text("x")
    values = {setting: tmp_path / "absent.pem",
              **{k: tmp_path / "real.pem" for k in other}}
    with pytest.raises(ValidationError, match=f"ASSAY_{setting.upper()}: no file at .*absent"):
        Settings.model_validate(values)


def test_a_certificate_needs_its_key(tmp_path: Path) -> None:
    (tmp_path / "c.pem").write_text("x")
    with pytest.raises(ValidationError, match="ASSAY_TEMPORAL_TLS_CERT and "
                                              "ASSAY_TEMPORAL_TLS_KEY go together"):
        Settings(temporal_tls_cert=tmp_path / "c.pem")


def test_the_cli_names_a_refused_setting_and_exits_2(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env.update(PYTHONPATH=str(ROOT), ASSAY_DATA_DIR=str(tmp_path),
               ASSAY_TEMPORAL_TLS_CA=str(tmp_path / "ca.pem"))
    done = subprocess.run([sys.executable, "-m", "workers.cli", "runs"], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == ["error: invalid settings:",
                                        f"  ASSAY_TEMPORAL_TLS_CA: no file at {tmp_path}/ca.pem"]


def test_settings_come_from_the_environment_and_keep_secrets_secret(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pki = make_pki(tmp_path)
    monkeypatch.setenv("ASSAY_TEMPORAL_TLS_CERT", str(pki.client_cert))
    monkeypatch.setenv("ASSAY_TEMPORAL_TLS_KEY", str(pki.client_key))
    monkeypatch.setenv("ASSAY_TEMPORAL_API_KEY", "cloud-key-123")
    monkeypatch.setenv("ASSAY_CODEC_KEYS", "k1=" + "A" * 43 + "=")
    settings = Settings()
    assert settings.temporal_tls_cert == pki.client_cert and settings.temporal_uses_tls
    shown = repr(settings) + str(settings.model_dump())
    assert "cloud-key-123" not in shown and "AAAA" not in shown


def test_no_tls_setting_means_plaintext_and_an_api_key_means_tls() -> None:
    assert connect_options(Settings()).tls is False
    keyed = connect_options(Settings(temporal_api_key=SecretStr("k")))
    assert keyed.tls is True and keyed.api_key == "k"
    assert connect_options(Settings(temporal_tls=True)).tls is True


def test_certificates_are_read_into_the_tls_config(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    options = connect_options(Settings(temporal_tls_ca=pki.ca, temporal_tls_cert=pki.client_cert,
                                       temporal_tls_key=pki.client_key,
                                       temporal_tls_server_name=SERVER_NAME))
    assert options.tls == TLSConfig(server_root_ca_cert=pki.ca.read_bytes(),
                                    client_cert=pki.client_cert.read_bytes(),
                                    client_private_key=pki.client_key.read_bytes(),
                                    domain=SERVER_NAME)
    assert options.api_key is None


@pytest.mark.integration
async def test_mutual_tls_reaches_temporal_through_a_tls_front(dev_env: WorkflowEnvironment,
                                                              tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    upstream = dev_env.client.service_client.config.target_host
    async with tls_proxy(pki, upstream) as (address, admitted):
        settings = Settings(temporal_address=address, temporal_tls_ca=pki.ca,
                            temporal_tls_cert=pki.client_cert, temporal_tls_key=pki.client_key,
                            temporal_tls_server_name=SERVER_NAME,
                            temporal_api_key=SecretStr("cloud-key"))
        client = await connect(settings)
        assert client.api_key == "cloud-key"  # sent as a bearer token (the dev server ignores it)
        described = await client.workflow_service.describe_namespace(
            DescribeNamespaceRequest(namespace="default"), timeout=timedelta(seconds=10))
        assert described.namespace_info.name == "default"
        assert admitted and set(admitted) == {"assay-worker"}

        no_client_cert = Settings(temporal_address=address, temporal_tls_ca=pki.ca,
                                  temporal_tls_server_name=SERVER_NAME)
        with pytest.raises(RuntimeError):
            await connect(no_client_cert)
        untrusted = Settings(temporal_address=address, temporal_tls=True)  # system roots only
        with pytest.raises(RuntimeError):
            await connect(untrusted)
