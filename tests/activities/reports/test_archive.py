"""The hand-off archive (002 Phase 8): one tar.gz of a report folder, sha256 manifest first."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from pathlib import Path

import pytest

from activities.reports.archive import MANIFEST, ArchiveError, pack, verify_archive


def folder(tmp_path: Path) -> Path:
    run = tmp_path / "run-1"
    (run / "tasks").mkdir(parents=True)
    (run / "execution_results_1.json").write_text('{"run_id": "run-1"}')
    (run / "tasks" / "b.json").write_text("b")
    (run / "tasks" / "a.json").write_text("a")
    return run


def test_the_manifest_comes_first_and_lists_every_file_with_its_sha256(
        tmp_path: Path) -> None:
    dest = pack(folder(tmp_path), tmp_path / "out.tar.gz", mtime=1_700_000_000)
    with tarfile.open(dest, "r:gz") as tar:
        names = tar.getnames()
        manifest = tar.extractfile(names[0])
        assert manifest is not None
        lines = manifest.read().decode().splitlines()
        assert {m.mtime for m in tar.getmembers()} == {1_700_000_000}
        assert {(m.uid, m.mode) for m in tar.getmembers()} == {(0, 0o644)}
    assert names == [f"run-1/{MANIFEST}", "run-1/execution_results_1.json",
                     "run-1/tasks/a.json", "run-1/tasks/b.json"]
    assert lines[1] == f"{hashlib.sha256(b'a').hexdigest()}  tasks/a.json"
    assert verify_archive(dest) == 3


def test_the_same_folder_packs_to_the_same_bytes(tmp_path: Path) -> None:
    run = folder(tmp_path)
    first = pack(run, tmp_path / "1.tar.gz").read_bytes()
    os.utime(run / "tasks" / "a.json", (5, 5))
    assert pack(run, tmp_path / "2.tar.gz").read_bytes() == first


def test_links_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    run = folder(tmp_path)
    (run / "secret").symlink_to("/etc/hostname")
    with pytest.raises(ArchiveError, match="is a link"):
        pack(run, tmp_path / "out.tar.gz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run-1"]


def test_a_folder_over_its_bounds_is_refused(tmp_path: Path) -> None:
    run = folder(tmp_path)
    with pytest.raises(ArchiveError, match="more than 2 files"):
        pack(run, tmp_path / "out.tar.gz", max_files=2)
    with pytest.raises(ArchiveError, match="or 10 bytes"):
        pack(run, tmp_path / "out.tar.gz", max_bytes=10)


def test_a_changed_member_fails_verification(tmp_path: Path) -> None:
    run = folder(tmp_path)
    dest = pack(run, tmp_path / "out.tar.gz")
    bad = tmp_path / "bad.tar.gz"
    with tarfile.open(dest, "r:gz") as src, tarfile.open(bad, "w:gz") as out:
        for member in src.getmembers():
            data = src.extractfile(member)
            assert data is not None
            body = data.read()
            if member.name.endswith("a.json"):
                body = b"z"
            member.size = len(body)
            out.addfile(member, io.BytesIO(body))
    with pytest.raises(ArchiveError, match=r"tasks/a\.json"):
        verify_archive(bad)
