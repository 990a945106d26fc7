"""File digests, read in chunks (local files only; no server)."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from activities.common.digests import CHUNK, drain, file_sha256


def test_a_file_digest_is_the_sha256_of_its_bytes(tmp_path: Path) -> None:
    body = b"sepal_length\n" + bytes(range(256)) * (CHUNK // 128)  # more than one chunk
    path = tmp_path / "data.bin"
    path.write_bytes(body)
    assert file_sha256(path) == hashlib.sha256(body).hexdigest()


def test_an_unreadable_file_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        file_sha256(tmp_path / "missing.csv")


def test_drain_counts_hashes_and_copies_what_it_reads() -> None:
    body = b"x" * (CHUNK + 10)
    copy = io.BytesIO()
    assert drain(io.BytesIO(body), copy.write) == (len(body), hashlib.sha256(body).hexdigest())
    assert copy.getvalue() == body
    assert drain(io.BytesIO(b"")) == (0, hashlib.sha256(b"").hexdigest())
