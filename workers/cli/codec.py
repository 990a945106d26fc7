"""``assay codec-server`` and ``assay codec-key``: reading encrypted payloads in the Web UI.

With payload keys set (ASSAY_CODEC_KEYS or ASSAY_CODEC_KEY_FILE) every payload in Temporal is
encrypted; the Web UI shows them decoded only through a codec server that holds the keys.
"""

from __future__ import annotations

from typing import Annotated

import typer

from workers.cli.common import EXIT_BAD_INPUT, fail
from workers.settings import Settings


def codec_server(
        port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8081,
        host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1") -> None:
    """Serve the Web UI's remote codec endpoint (POST /decode, /encode) with the payload keys.

    Point the UI at it (`temporal server start-dev --ui-codec-endpoint URL`, or the namespace's
    Codec Server setting in Temporal Cloud), or the `temporal` CLI (`--codec-endpoint URL`).
    Only ASSAY_CODEC_ORIGINS may call it from a browser (default: the Web UI on
    ASSAY_TEMPORAL_UI_PORT), and each origin refused is logged; with ASSAY_CODEC_TOKEN set, only
    requests bearing that token.
    """
    import logging

    from workers.connection import CodecKeyError, EncryptionCodec, key_ring
    from workers.connection.codec_server import CodecServer

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    settings = Settings()
    try:
        ring = key_ring(settings)
    except CodecKeyError as err:
        fail(str(err), EXIT_BAD_INPUT)
    if ring is None:
        fail("no payload keys: set ASSAY_CODEC_KEYS or ASSAY_CODEC_KEY_FILE to the keys the "
             "workers encrypt with", EXIT_BAD_INPUT)
    token = settings.codec_token.get_secret_value() if settings.codec_token else None
    server = CodecServer(EncryptionCodec(ring), host=host, port=port,
                         origins=settings.allowed_origins, token=token)
    typer.echo(f"codec server on {server.url} (keys {', '.join(ring.ids)}; origins "
               f"{', '.join(sorted(server.origins))}; "
               f"{'token required' if token else 'no token: anyone who can reach it'})")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def codec_key(key_id: Annotated[str, typer.Argument(help="The new key's id.")]) -> None:
    """Print a new payload key as ID=BASE64; put it first in ASSAY_CODEC_KEYS to rotate."""
    from workers.connection import CodecKeyError, KeyRing
    from workers.connection.codec import new_key

    entry = f"{key_id}={new_key()}"
    try:
        KeyRing.parse(entry, source="the key id")
    except CodecKeyError as err:
        fail(str(err), EXIT_BAD_INPUT)
    typer.echo(entry)
