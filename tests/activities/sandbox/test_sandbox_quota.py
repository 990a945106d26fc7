"""What a job leaves on disk is bounded: blocks, files, depth, and what reaches the store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.artifacts.store import LocalArtifactStore
from activities.common.trees import remove_tree
from activities.sandbox.job import Sandbox
from tests.activities.sandbox.test_sandbox import attempt_dir, request, run
from tests.support.disks import nest, small_tmpfs


def stored_bytes(store: LocalArtifactStore) -> int:
    return sum(p.stat().st_size for p in store.root.rglob("*") if p.is_file())


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "store")


# The attack of issue 29: sparse files pass a quota of allocated blocks, and read back at
# their full size. Three of them (all different), each the size of the whole quota.
SPARSE = """
for i in range(3):
    with open(f'sparse-{i}.bin', 'wb') as f:
        f.seek((8 << 20) - 4)
        f.write(b'tail' if i == 0 else b'end%d' % i)
open('small.txt', 'w').write('ok')
"""


async def test_sparse_files_never_put_more_than_the_quota_in_the_store(
        work_dir: Path, store: LocalArtifactStore) -> None:
    sandbox = Sandbox(work_dir=work_dir, max_disk_mb=8, store=store)
    outcome = await run(sandbox, SPARSE, timeout_s=20.0)
    assert outcome.exit_code == 0
    assert outcome.outcome == "sandbox_violation", outcome.reason
    assert "larger read back than the sandbox stores" in outcome.reason
    assert "ASSAY_JOB_MAX_ARTIFACTS_MB" in outcome.reason and "24.0 MiB" in outcome.reason
    assert outcome.artifacts == []
    assert stored_bytes(store) == 0, "nothing of the job reached the artifact store"
    assert not Path(outcome.workspace).exists()


async def test_one_artifact_larger_than_allowed_read_back_is_refused(
        work_dir: Path, store: LocalArtifactStore) -> None:
    sandbox = Sandbox(work_dir=work_dir, max_artifact_mb=4, store=store)
    outcome = await run(sandbox, SPARSE, timeout_s=20.0)
    assert outcome.outcome == "sandbox_violation", outcome.reason
    assert "ASSAY_ARTIFACT_MAX_MB" in outcome.reason
    assert "'sparse-0.bin' is 8.0 MiB read back" in outcome.reason
    assert stored_bytes(store) == 0


async def test_within_the_bounds_sparse_and_dense_artifacts_are_stored(
        work_dir: Path, store: LocalArtifactStore) -> None:
    sandbox = Sandbox(work_dir=work_dir, max_disk_mb=32, store=store)
    outcome = await run(sandbox, SPARSE, timeout_s=20.0)
    assert outcome.outcome == "succeeded", outcome.reason
    assert sorted(a.name for a in outcome.artifacts) == [
        "small.txt", "sparse-0.bin", "sparse-1.bin", "sparse-2.bin"]
    assert stored_bytes(store) == 3 * (8 << 20) + 2


async def test_a_job_over_its_disk_quota_puts_nothing_in_the_store(
        work_dir: Path, store: LocalArtifactStore) -> None:
    sandbox = Sandbox(work_dir=work_dir, max_disk_mb=16, heartbeat_every_s=5.0, store=store)
    code = "for i in range(6):\n    open(f'part-{i}.bin', 'wb').write(b'x' * (4 << 20))\n"
    outcome = await run(sandbox, code, timeout_s=20.0)
    assert outcome.outcome == "sandbox_violation"
    assert "disk quota of 16 MiB" in outcome.reason and "grew by 24" in outcome.reason
    assert "nothing it wrote was kept" in outcome.reason
    assert outcome.artifacts == [] and stored_bytes(store) == 0
    assert not Path(outcome.workspace).exists()


async def test_a_job_creating_more_files_than_allowed_is_stopped(
        work_dir: Path, store: LocalArtifactStore) -> None:
    sandbox = Sandbox(work_dir=work_dir, max_files=300, heartbeat_every_s=0.05, store=store)
    code = ("import time\nfor i in range(2000):\n    open(f'empty-{i}', 'w').close()\n"
            "open('all-written', 'w').close()\ntime.sleep(60)\n")
    outcome = await run(sandbox, code, timeout_s=20.0)
    assert outcome.outcome == "sandbox_violation", outcome.reason
    assert "more than 300 files and directories" in outcome.reason
    assert "ASSAY_JOB_MAX_FILES" in outcome.reason
    assert outcome.duration_s < 20.0, "stopped while it ran, not at the timeout"
    assert stored_bytes(store) == 0 and not Path(outcome.workspace).exists()


NEST = """
import os
for _ in range(1500):
    os.mkdir('d')
    os.chdir('d')
open('bottom.txt', 'w').write('deep')
"""


async def test_a_deep_tree_is_a_sandbox_violation_and_is_removed(
        work_dir: Path, store: LocalArtifactStore) -> None:
    sandbox = Sandbox(work_dir=work_dir, store=store)
    outcome = await run(sandbox, NEST, timeout_s=20.0)
    assert outcome.outcome == "sandbox_violation", outcome.reason
    assert "nested directories deeper than the sandbox reads (at most 64 levels)" in (
        outcome.reason)
    assert not Path(outcome.workspace).exists()
    assert stored_bytes(store) == 0


async def test_a_retry_replaces_a_deep_tree_left_by_a_crashed_attempt(work_dir: Path) -> None:
    sandbox = Sandbox(work_dir=work_dir)
    left = work_dir / "run-1" / "t1" / attempt_dir()
    left.mkdir(parents=True)
    nest(left, 1500)
    outcome = await run(sandbox, "open('out.txt', 'w').write('fresh')")
    assert outcome.outcome == "succeeded", outcome.reason
    assert [a.name for a in outcome.artifacts] == ["out.txt"]
    assert not (left / "d").exists()


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB file system, filled up: a full disk for the artifact store."""
    with small_tmpfs(tmp_path / "full", fill=True) as mount:
        yield mount


async def test_no_job_starts_while_the_stores_disk_is_full(work_dir: Path,
                                                           full_disk: Path) -> None:
    sandbox = Sandbox(work_dir=work_dir, min_free_disk_mb=1,
                      store=LocalArtifactStore(full_disk / "store"))
    with pytest.raises(ApplicationError) as refused:
        await ActivityEnvironment().run(sandbox.execute_job, request("print('hi')"))
    assert refused.value.type == "DiskFull" and not refused.value.non_retryable
    assert f"free on the disk of the artifact store ({full_disk / 'store'})" in str(
        refused.value)
    assert "ASSAY_MIN_FREE_DISK_MB" in str(refused.value)
    assert not (work_dir / "run-1").exists(), "nothing was laid out"


def test_removing_a_tree_follows_no_link_and_unlocks_what_the_job_locked(
        tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    tree = tmp_path / "tree"
    (tree / "a" / "locked").mkdir(parents=True)
    (tree / "a" / "locked" / "f").write_text("x")
    (tree / "a" / "link").symlink_to(outside)
    (tree / "a" / "locked").chmod(0)
    remove_tree(tree)
    assert not tree.exists() and (outside / "keep.txt").read_text() == "keep"
