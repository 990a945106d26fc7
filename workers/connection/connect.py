"""Connect to Temporal as settings say: address, namespace, TLS, API key and converter.

Every client Assay opens (the CLI, the workers, the embedded stack's checks and services using
AssayClient from Python) comes from :func:`connect`, so a secured or encrypted namespace
needs its settings once.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from temporalio.client import Client
from temporalio.converter import DataConverter, DefaultFailureConverterWithEncodedAttributes
from temporalio.runtime import Runtime
from temporalio.service import TLSConfig

from client.assay import DATA_CONVERTER
from workers.connection.codec import EncryptionCodec, KeyRing
from workers.settings import Settings


def key_ring(settings: Settings) -> KeyRing | None:
    """The payload keys settings give (ASSAY_CODEC_KEYS or ASSAY_CODEC_KEY_FILE), if any."""
    if settings.codec_keys is not None:
        return KeyRing.parse(settings.codec_keys.get_secret_value(), source="ASSAY_CODEC_KEYS")
    if settings.codec_key_file is not None:
        return KeyRing.parse(settings.codec_key_file.read_text(),
                             source=f"ASSAY_CODEC_KEY_FILE ({settings.codec_key_file})")
    return None


def data_converter(settings: Settings) -> DataConverter:
    """Assay's pydantic converter, encrypting payloads and failure messages when keys are set.

    Raises:
        CodecKeyError: the keys are set but malformed; the message names the setting.
    """
    ring = key_ring(settings)
    if ring is None:
        return DATA_CONVERTER
    return dataclasses.replace(DATA_CONVERTER, payload_codec=EncryptionCodec(ring),
                               failure_converter_class=DefaultFailureConverterWithEncodedAttributes)


@dataclass(frozen=True)
class ConnectOptions:
    """What secures a connection: TLS (or none) and an API key."""

    tls: TLSConfig | bool
    api_key: str | None


def connect_options(settings: Settings) -> ConnectOptions:
    """TLS and API key of settings; certificate files are read here, at connect time."""
    api_key = (settings.temporal_api_key.get_secret_value()
               if settings.temporal_api_key is not None else None)
    if not settings.temporal_uses_tls:
        return ConnectOptions(tls=False, api_key=api_key)
    cert, key, ca = (p.read_bytes() if p is not None else None
                     for p in (settings.temporal_tls_cert, settings.temporal_tls_key,
                               settings.temporal_tls_ca))
    if cert is None and ca is None and settings.temporal_tls_server_name is None:
        return ConnectOptions(tls=True, api_key=api_key)
    return ConnectOptions(tls=TLSConfig(server_root_ca_cert=ca, client_cert=cert,
                                        client_private_key=key,
                                        domain=settings.temporal_tls_server_name),
                          api_key=api_key)


async def connect(settings: Settings, *, runtime: Runtime | None = None,
                  identity: str | None = None) -> Client:
    """A client of settings' Temporal namespace, secured and converting as settings say."""
    secured = connect_options(settings)
    return await Client.connect(settings.temporal_address, namespace=settings.temporal_namespace,
                                data_converter=data_converter(settings), tls=secured.tls,
                                api_key=secured.api_key, runtime=runtime, identity=identity)
