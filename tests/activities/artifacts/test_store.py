"""The local artifact store: put by content, open by sha256, never through a link."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from activities.artifacts.store import (
    LocalArtifactStore,
    NotStoredError,
    StoreError,
    UnsafeEntryError,
    is_sha256,
    open_beneath,
)


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "store")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def entry(store: LocalArtifactStore, digest: str) -> Path:
    return store.root / "sha256" / digest[:2] / digest


def test_put_then_open_gives_the_content_back(store: LocalArtifactStore,
                                              tmp_path: Path) -> None:
    source = tmp_path / "data.csv"
    source.write_bytes(b"a,b\n1,2\n")
    stored = store.put(source)
    assert (stored.sha256, stored.size) == (sha(b"a,b\n1,2\n"), 8)
    with store.open(stored.sha256) as handle:
        assert handle.read() == b"a,b\n1,2\n"
    assert stat.S_IMODE(entry(store, stored.sha256).stat().st_mode) == 0o444
    for directory in (store.root, store.root / "sha256", entry(store, stored.sha256).parent):
        assert stat.S_IMODE(directory.stat().st_mode) & 0o077 == 0, directory
    assert [p.name for p in (store.root / "sha256").iterdir()] == [stored.sha256[:2]]


def test_directories_below_the_root_take_its_mode(tmp_path: Path) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    root.chmod(0o750)  # as an operator sharing the store with a group would
    source = tmp_path / "x"
    source.write_bytes(b"x")
    stored = LocalArtifactStore(root).put(source)
    for directory in (root / "sha256", root / "sha256" / stored.sha256[:2]):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o750, directory


def test_a_second_put_heals_a_damaged_entry(store: LocalArtifactStore, tmp_path: Path) -> None:
    source = tmp_path / "data.csv"
    source.write_bytes(b"content")
    digest = store.put(source).sha256
    damaged = entry(store, digest)
    damaged.chmod(0o644)
    damaged.write_bytes(b"cut")
    assert store.put(source).sha256 == digest
    assert damaged.read_bytes() == b"content"


def test_nothing_stored_under_a_digest_is_not_stored(store: LocalArtifactStore,
                                                     tmp_path: Path) -> None:
    source = tmp_path / "x"
    source.write_bytes(b"x")
    store.put(source)
    with pytest.raises(NotStoredError):
        store.open(sha(b"something else"))


@pytest.mark.parametrize("name", ["../../etc/passwd", "0" * 63, "A" * 64, "0" * 64 + "/x", ""])
def test_a_name_that_is_not_a_digest_is_refused(store: LocalArtifactStore, name: str) -> None:
    assert not is_sha256(name)
    with pytest.raises(UnsafeEntryError, match="not a sha256"):
        store.open(name)


def secret_file(tmp_path: Path) -> tuple[Path, str]:
    secret = tmp_path / "secret"
    secret.write_bytes(b"root only")
    secret.chmod(0o600)
    return secret, sha(b"root only")


def test_a_link_planted_as_an_entry_is_refused(store: LocalArtifactStore,
                                               tmp_path: Path) -> None:
    secret, digest = secret_file(tmp_path)
    entry(store, digest).parent.mkdir(parents=True)
    entry(store, digest).symlink_to(secret)
    with pytest.raises(UnsafeEntryError, match="symbolic link"):
        store.open(digest)


def test_a_link_planted_as_a_directory_is_refused(store: LocalArtifactStore,
                                                  tmp_path: Path) -> None:
    secret, digest = secret_file(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / digest).symlink_to(secret)
    (store.root / "sha256").mkdir(parents=True)
    (store.root / "sha256" / digest[:2]).symlink_to(elsewhere)
    with pytest.raises(UnsafeEntryError, match="symbolic link"):
        store.open(digest)


def test_a_fifo_in_the_store_is_refused_without_blocking(store: LocalArtifactStore) -> None:
    digest = sha(b"pipe")
    entry(store, digest).parent.mkdir(parents=True)
    os.mkfifo(entry(store, digest))
    with pytest.raises(UnsafeEntryError, match="not a regular file"):
        store.open(digest)


def test_only_regular_files_can_be_put(store: LocalArtifactStore, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(StoreError, match="not a regular file"):
        store.put(tmp_path / "pipe")
    assert not (store.root / "sha256").exists() or not any((store.root / "sha256").iterdir())


@pytest.mark.parametrize("parts", [(), ("a", ".."), ("..", "x"), ("a", ""), ("a/b",), (".",)])
def test_open_beneath_refuses_parts_that_could_leave_the_root(tmp_path: Path,
                                                              parts: tuple[str, ...]) -> None:
    with pytest.raises(UnsafeEntryError, match="parts"):
        open_beneath(tmp_path, parts)


def test_open_beneath_opens_a_plain_file(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b.txt").write_bytes(b"ok")
    fd = open_beneath(tmp_path, ("a", "b.txt"))
    with os.fdopen(fd, "rb") as handle:
        assert handle.read() == b"ok"
