"""The S3 artifact store against a real S3 API (moto's server): put and fetch by sha256,
idempotent puts, a checksum mismatch refused and named, a transfer cut midway or a stopped
server a transient error that leaves nothing behind."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from activities.artifacts.location import store_at
from activities.artifacts.s3 import S3ArtifactStore
from activities.artifacts.store import (
    DamagedEntryError,
    LocalArtifactStore,
    NotStoredError,
    StoreUnavailableError,
    TooLargeError,
    UnsafeEntryError,
)
from tests.support.s3 import BUCKET, CuttingProxy, S3Server, s3_server
from workers.settings import Settings

BIG = 3 * 1024 * 1024


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        yield server


def a_file(tmp_path: Path, data: bytes, name: str = "data.bin") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_put_then_fetch_and_open_give_the_content_back(s3: S3Server, tmp_path: Path) -> None:
    data = os.urandom(BIG)
    store = s3.store("runs/a")
    stored = store.put(a_file(tmp_path, data))
    digest = hashlib.sha256(data).hexdigest()
    assert (stored.sha256, stored.size) == (digest, BIG)
    assert s3.keys("runs/a/") == [f"runs/a/sha256/{digest[:2]}/{digest}"]
    out = tmp_path / "out" / "copy.bin"
    out.parent.mkdir()
    assert store.fetch(digest, out) == stored
    assert out.read_bytes() == data and out.stat().st_mode & 0o777 == 0o444
    with store.open(digest) as handle:
        assert handle.read() == data


def test_a_second_put_of_the_same_content_keeps_one_object(s3: S3Server,
                                                           tmp_path: Path) -> None:
    store = s3.store("twice")
    first = store.put(a_file(tmp_path, b"same bytes", "one"))
    second = store.put(a_file(tmp_path, b"same bytes", "two"))
    assert first == second
    assert len(s3.keys("twice/")) == 1


def test_a_missing_object_or_a_malformed_name_is_refused(s3: S3Server, tmp_path: Path) -> None:
    store = s3.store("empty")
    with pytest.raises(NotStoredError, match="no such object"):
        store.fetch("0" * 64, tmp_path / "x")
    with pytest.raises(UnsafeEntryError):
        store.fetch("../../etc/passwd", tmp_path / "x")
    assert leftovers(tmp_path) == []


def test_a_tampered_object_is_refused_and_named_never_handed_out(s3: S3Server,
                                                                 tmp_path: Path) -> None:
    store = s3.store("tamper")
    data = b"the verified bytes\n" * 1000
    digest = store.put(a_file(tmp_path, data)).sha256
    s3.client().put_object(Bucket=BUCKET, Key=f"tamper/sha256/{digest[:2]}/{digest}",
                           Body=b"other bytes under the same name")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(DamagedEntryError, match=f"sha256:{digest} in s3://{BUCKET}/tamper"):
        store.fetch(digest, out / "copy")
    with pytest.raises(DamagedEntryError, match=digest):
        store.open(digest)
    assert leftovers(out) == []


def test_a_fetch_cut_midway_is_transient_and_leaves_no_partial_file(s3: S3Server,
                                                                    tmp_path: Path) -> None:
    data = os.urandom(BIG)
    digest = s3.store("cut").put(a_file(tmp_path, data)).sha256
    proxy = CuttingProxy(s3.server._port, cut_after=1_500_000)  # pyright: ignore[reportPrivateUsage]
    try:
        out = tmp_path / "out"
        out.mkdir()
        with pytest.raises(StoreUnavailableError,
                           match=rf"fetching sha256:{digest} \(after [1-9][0-9,]* bytes\)"):
            s3.store("cut", endpoint=proxy.endpoint).fetch(digest, out / "copy")
        assert proxy.cuts >= 1
        assert leftovers(out) == []
    finally:
        proxy.close()


def test_a_stopped_server_is_a_transient_error(tmp_path: Path) -> None:
    with s3_server() as server:
        store = server.store()
        digest = store.put(a_file(tmp_path, b"kept")).sha256
        server.server.stop()
        with pytest.raises(StoreUnavailableError, match="could not be reached"):
            store.fetch(digest, tmp_path / "copy")
        with pytest.raises(StoreUnavailableError):
            store.put(a_file(tmp_path, b"new"))
    assert not (tmp_path / "copy").exists()


def test_a_fetch_over_its_bound_keeps_nothing(s3: S3Server, tmp_path: Path) -> None:
    store = s3.store("bounded")
    digest = store.put(a_file(tmp_path, b"x" * 5000)).sha256
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(TooLargeError):
        store.fetch(digest, out / "copy", max_bytes=1000)
    assert leftovers(out) == []


def test_the_url_chooses_the_back_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(store_at(None, default_dir=tmp_path), LocalArtifactStore)
    local = store_at(f"file://{tmp_path}/elsewhere", default_dir=tmp_path)
    assert isinstance(local, LocalArtifactStore) and local.root == tmp_path / "elsewhere"
    remote = store_at("s3://bucket/some/prefix", default_dir=tmp_path)
    assert isinstance(remote, S3ArtifactStore) and remote.url == "s3://bucket/some/prefix"
    monkeypatch.setenv("ASSAY_STORE_URL", "ftp://host/x")
    with pytest.raises(ValidationError, match="file:///path or s3://bucket/prefix"):
        Settings()
    monkeypatch.setenv("ASSAY_STORE_URL", "file://relative/path")
    with pytest.raises(ValidationError, match="file:///absolute/path"):
        Settings()


def test_settings_keep_the_credentials_secret(monkeypatch: pytest.MonkeyPatch,
                                              s3: S3Server) -> None:
    for name, value in s3.env("p").items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    assert "testing-secret" not in repr(settings)
    store = settings.artifact_store()
    assert isinstance(store, S3ArtifactStore) and store.url == f"s3://{BUCKET}/p"
