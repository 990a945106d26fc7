"""How every Assay process reaches Temporal: one place for the connection and the converter.

The CLI, the workers and the embedded stack connect through :func:`connect` and convert
payloads through :func:`data_converter`, both built from
:class:`~workers.settings.Settings`: TLS (server CA, client certificate, server name) and an
API key for a secured Temporal such as a Temporal Cloud namespace, and an AES-GCM payload
codec (:class:`EncryptionCodec`, keys with ids so they rotate) when payload keys are set.
Keys come from the environment or a file, never from a workflow's input or history; with no
key the converter is Assay's plain pydantic one. ``codec_server.py`` serves the Web UI's
remote codec endpoint (``assay codec-server``) with the same keys.
"""

from workers.connection.codec import (
    CodecKeyError,
    EncryptionCodec,
    KeyRing,
    PayloadDecryptionError,
    UnknownCodecKeyError,
)
from workers.connection.connect import connect, connect_options, data_converter, key_ring

__all__ = [
    "CodecKeyError",
    "EncryptionCodec",
    "KeyRing",
    "PayloadDecryptionError",
    "UnknownCodecKeyError",
    "connect",
    "connect_options",
    "data_converter",
    "key_ring",
]
