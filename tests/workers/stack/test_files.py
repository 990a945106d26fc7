"""``assay check`` of the data directory's files: private modes, and free space on its disks."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.disks import small_tmpfs
from workers.settings import Settings
from workers.stack.check import check
from workers.stack.host import HealthItem, host_items


def by_name(items: list[HealthItem]) -> dict[str, HealthItem]:
    return {item.name: item for item in items}


def test_check_warns_about_run_data_others_may_read(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "assay")
    settings.logs_dir.mkdir(parents=True)  # as an older version left it: 0755 and 0644
    settings.root.chmod(0o755)
    for path in (settings.temporal_db, settings.logs_dir / "stack.log"):
        path.write_text("history")
        path.chmod(0o644)
    item = by_name(host_items(settings))["file modes"]
    assert item.ok and item.warning
    assert f"{settings.root} (drwxr-xr-x)" in item.detail
    assert f"{settings.temporal_db} (-rw-r--r--)" in item.detail
    assert str(settings.logs_dir / "stack.log") in item.detail
    assert f"chmod -R go-rwx {settings.root}" in item.detail

    subprocess.run(["chmod", "-R", "go-rwx", str(settings.root)], check=True)
    item = by_name(host_items(settings))["file modes"]
    assert (item.ok, item.warning) == (True, False)
    assert item.detail == f"{settings.root} is private"


def test_the_data_directory_is_created_private(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "new" / "assay")
    settings.make_root()
    assert settings.root.stat().st_mode & 0o777 == (0o711 if os.geteuid() == 0 else 0o700)
    assert not by_name(host_items(settings))["file modes"].warning


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs: a disk with less free space than any reserve."""
    with small_tmpfs(tmp_path / "small") as mount:
        yield mount


def test_check_fails_below_the_reserve_on_the_data_directory_store_and_work_disks(
        full_disk: Path, tmp_path: Path) -> None:
    settings = Settings(data_dir=full_disk / "assay")
    items = by_name(host_items(settings))
    for name in ("space data directory", "space store", "space work"):
        assert not items[name].ok, items[name]
        assert f"MiB free on the disk of {full_disk / 'assay'}" in items[name].detail
        assert f"(reserve {settings.min_free_disk_mb} MiB)" in items[name].detail
    assert "jobs are stopped below it" in items["space work"].detail

    roomy = Settings(data_dir=tmp_path / "assay", store_path=full_disk / "store")
    items = by_name(host_items(roomy))
    assert items["space data directory"].ok and items["space work"].ok
    assert not items["space store"].ok, "the store's own disk is the one measured"
    lowered = by_name(host_items(settings.model_copy(update={"min_free_disk_mb": 0})))
    assert all(lowered[name].ok for name in ("space data directory", "space store"))


def test_an_s3_store_has_no_disk_here(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, store_url="s3://bucket/prefix")
    names = by_name(host_items(settings))
    assert "space store" not in names and "space work" in names


def test_check_and_the_store_create_a_missing_data_directory_private(tmp_path: Path) -> None:
    private = 0o711 if os.geteuid() == 0 else 0o700
    checked = Settings(data_dir=tmp_path / "checked" / "assay",
                       temporal_address="127.0.0.1:1")  # nothing answers: nothing waits
    check(checked)
    assert checked.root.stat().st_mode & 0o777 == private
    stored = Settings(data_dir=tmp_path / "stored" / "assay")
    stored.artifact_store()
    assert stored.root.stat().st_mode & 0o777 == private
