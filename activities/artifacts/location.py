"""Which artifact store a URL names: a local directory or an S3-compatible bucket.

``file:///path`` (or no URL: the data directory's ``store``) is the local store the embedded
stack uses; ``s3://bucket/prefix`` is object storage, for pools on separate hosts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from activities.artifacts.store import ArtifactStore, LocalArtifactStore

if TYPE_CHECKING:  # the S3 client is imported only when a store needs it
    from activities.artifacts.s3 import S3Options


def check_store_url(url: str) -> str:
    """``url`` if it names a store this version can open; a ``ValueError`` saying why not."""
    parts = urlsplit(url)
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
            raise ValueError(f"{url!r}: a local store is file:///absolute/path")
    elif parts.scheme == "s3":
        if not parts.netloc or parts.query or parts.fragment:
            raise ValueError(f"{url!r}: an S3 store is s3://bucket or s3://bucket/prefix")
    else:
        raise ValueError(f"{url!r}: the artifact store is file:///path or s3://bucket/prefix")
    return url


def store_at(url: str | None, *, default_dir: Path,
             options: S3Options | None = None) -> ArtifactStore:
    """The store ``url`` names (none: a local store in ``default_dir``).

    Args:
        url: ``file:///path``, ``s3://bucket/prefix`` or ``None``.
        default_dir: the local store's directory when there is no URL.
        options: how to reach an S3 store (endpoint, region, credentials).
    """
    if not url:
        return LocalArtifactStore(default_dir)
    parts = urlsplit(check_store_url(url))
    if parts.scheme == "file":
        return LocalArtifactStore(Path(unquote(parts.path)))
    from activities.artifacts.s3 import S3ArtifactStore

    return S3ArtifactStore(parts.netloc, unquote(parts.path).strip("/"), options)
