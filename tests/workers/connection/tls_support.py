"""A throwaway PKI and a TLS-terminating proxy, to test mutual TLS against the dev server.

The dev server speaks plaintext gRPC only; the proxy ends TLS (ALPN ``h2``, client
certificate required) and passes the HTTP/2 stream through to it, as a load balancer in front
of a self-hosted Temporal would.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import ssl
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVER_NAME = "temporal.assay.test"


@dataclass(frozen=True)
class Pki:
    """PEM files: the CA, the server's certificate and key, a client's certificate and key."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _write_key(path: Path) -> ec.EllipticCurvePrivateKey:
    key = ec.generate_private_key(ec.SECP256R1())
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return key


def _certificate(subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name,
                 signer: ec.EllipticCurvePrivateKey, *, ca: bool,
                 usage: x509.ObjectIdentifier | None = None,
                 names: list[x509.GeneralName] | None = None) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
               .issuer_name(issuer).public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if usage is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(signer, hashes.SHA256())


def make_pki(folder: Path) -> Pki:
    """A CA, a server certificate for :data:`SERVER_NAME` and 127.0.0.1, a client one."""
    pki = Pki(*(folder / name for name in ("ca.pem", "server.pem", "server.key",
                                           "client.pem", "client.key")))
    ca_key = _write_key(folder / "ca.key")
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Assay test CA")])
    ca = _certificate("Assay test CA", ca_key, ca_name, ca_key, ca=True)
    server = _certificate(SERVER_NAME, _write_key(pki.server_key), ca_name, ca_key, ca=False,
                          usage=ExtendedKeyUsageOID.SERVER_AUTH,
                          names=[x509.DNSName(SERVER_NAME),
                                 x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    client = _certificate("assay-worker", _write_key(pki.client_key), ca_name, ca_key, ca=False,
                          usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    for path, cert in ((pki.ca, ca), (pki.server_cert, server), (pki.client_cert, client)):
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return pki


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()


@contextlib.asynccontextmanager
async def tls_proxy(pki: Pki, upstream: str) -> AsyncGenerator[tuple[str, list[str]]]:
    """A mutual-TLS front for ``upstream``; yields its address and the subjects it admitted."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(pki.ca))
    context.load_cert_chain(pki.server_cert, pki.server_key)
    context.verify_mode = ssl.CERT_REQUIRED
    context.set_alpn_protocols(["h2"])
    host, port = upstream.rsplit(":", 1)
    admitted: list[str] = []

    async def serve(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        peer: dict[str, Any] = client_w.get_extra_info("peercert") or {}
        subject: tuple[tuple[tuple[str, str], ...], ...] = peer.get("subject", ())
        admitted.extend(v for rdn in subject for k, v in rdn if k == "commonName")
        up_r, up_w = await asyncio.open_connection(host, int(port))
        await asyncio.gather(_pipe(client_r, up_w), _pipe(up_r, client_w))

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)
    address = f"127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        yield address, admitted
    finally:
        server.close()
