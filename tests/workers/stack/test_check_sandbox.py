"""``assay check`` says which memory guarantee sandboxed jobs get on this machine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from activities.sandbox import isolation
from activities.sandbox.hierarchy import CgroupSupport, cgroup_support
from workers.settings import Settings
from workers.stack.host import sandbox_item


@pytest.fixture
def fresh_status() -> Iterator[None]:
    """Forget the measured isolation before and after (it is cached per process)."""
    isolation.isolation_status.cache_clear()
    yield
    isolation.isolation_status.cache_clear()


def test_check_names_the_per_job_cgroup_where_there_is_one(
        fresh_status: None, tmp_path: Path) -> None:
    support = cgroup_support()
    if not support.available:
        pytest.skip(f"no per-job cgroup here: {support.problem}")
    item = sandbox_item(Settings(data_dir=tmp_path))
    assert item.ok
    assert f"per-job cgroup (v{support.version}: {', '.join(support.parents)})" in item.detail


def test_check_says_when_only_per_process_limits_hold(
        fresh_status: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(isolation, "cgroup_support",
                        lambda: CgroupSupport.unavailable("cannot create a cgroup in "
                                                          "/sys/fs/cgroup/memory: Read-only"))
    item = sandbox_item(Settings(data_dir=tmp_path))
    assert item.ok, "jobs still run, with the weaker guarantee"
    assert ("per-process limits only: a job's processes together may exceed its memory "
            "(cannot create a cgroup in /sys/fs/cgroup/memory: Read-only)") in item.detail
