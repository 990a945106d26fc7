"""What bounds a job as a whole: its cgroup, no user namespaces, its disk quota."""

from __future__ import annotations

import asyncio
import os
import platform
import threading
import time
from pathlib import Path

import psutil
import pytest
from temporalio.testing import ActivityEnvironment

from activities.sandbox import cgroup as cgroup_module
from activities.sandbox.hierarchy import CgroupSupport, cgroup_support, worker_id
from activities.sandbox.job import Sandbox
from tests.activities.sandbox.test_sandbox import (
    RUN,
    attempt_dir,
    job_uid,
    processes_of,
    run,
)
from tests.support.isolation import lacking
from tests.support.waiting import wait_for

SUPPORT = cgroup_support()
needs_cgroup = pytest.mark.skipif(not SUPPORT.available,
                                  reason=f"no per-job cgroup here: {SUPPORT.problem}")

# Four processes of 120 MiB each under a job limit of 256 MiB: every one passes the
# per-process address-space limit, together they do not fit.
MEMORY_TOGETHER = """
import multiprocessing as mp
def hold(size, conn):
    block = bytearray(size)
    block[::4096] = b"\\x01" * (size // 4096)  # touch every page
    conn.send("held")
    conn.recv()
    conn.send("still held")
    conn.recv()
if __name__ == "__main__":
    mp.set_start_method("fork")
    pipes = []
    for _ in range(4):
        mine, theirs = mp.Pipe()
        mp.Process(target=hold, args=(120 << 20, theirs), daemon=True).start()
        theirs.close()
        pipes.append(mine)
    for pipe in pipes:
        pipe.recv()  # EOFError when the kernel killed that process before it held its block
    # The kernel may kill a process after it said "held": ask each again once all hold.
    for pipe in pipes:
        pipe.send("still?")
        pipe.recv()  # EOFError (or BrokenPipeError above) when that process was killed
    print("all held")
"""


@needs_cgroup
async def test_processes_that_together_exceed_the_memory_limit_run_out_of_memory(
        work_dir: Path) -> None:
    sandbox = Sandbox(work_dir=work_dir)
    outcome = await run(sandbox, MEMORY_TOGETHER, memory_mb=256, timeout_s=30.0)
    assert outcome.outcome == "out_of_memory", outcome.reason + outcome.stderr_tail
    assert "processes together reached the job's memory limit of 256 MiB" in outcome.reason
    assert "all held" not in outcome.stdout_tail
    # The peak is the whole job's (more than two of its processes), not its largest process's.
    assert 240 <= outcome.peak_memory_mb <= 257
    assert "per-job cgroup" in outcome.isolation and "in cgroup assay-job-" in outcome.isolation


async def test_without_a_cgroup_jobs_run_with_per_process_limits_and_say_so(
        work_dir: Path) -> None:
    sandbox = Sandbox(work_dir=work_dir,
                      cgroups=CgroupSupport.unavailable("cgroups switched off for this test"))
    outcome = await run(sandbox, MEMORY_TOGETHER, memory_mb=256, timeout_s=30.0)
    assert outcome.outcome == "succeeded" and "all held" in outcome.stdout_tail
    assert ("per-process limits only: a job's processes together may exceed its memory "
            "(cgroups switched off for this test)") in outcome.isolation


def cgroup_dirs(pid: int) -> dict[str, Path]:
    """The directories of the job cgroup (below the worker's own) process ``pid`` is in."""
    own: dict[str, str] = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else ["unified"]:
            own[name] = path
    return {c: parent / Path(own["unified" if SUPPORT.version == 2 else c]).name
            for c, parent in SUPPORT.parents.items()}


@needs_cgroup
async def test_every_process_of_a_job_is_in_its_cgroup_which_goes_with_the_job(
        work_dir: Path) -> None:
    sandbox = Sandbox(work_dir=work_dir, max_processes=32)
    marker = f"{time.time_ns() % 10_000_000 + 1000}.5"
    code = ("import pathlib, subprocess, time\n"
            f"children = [subprocess.Popen(['sleep', '{marker}']) for _ in range(3)]\n"
            "pathlib.Path('started').write_text('yes')\ntime.sleep(60)\n")
    env = ActivityEnvironment()
    task = asyncio.ensure_future(run(sandbox, code, env, memory_mb=200, timeout_s=60.0))
    await wait_for((work_dir / RUN / "t1" / attempt_dir() / "started").exists, timeout=10,
                   what="the job to start")
    sleepers = [p for p in psutil.process_iter(["cmdline"])
                if p.info["cmdline"] == ["sleep", marker]]
    assert len(sleepers) == 3
    groups = {tuple(sorted(cgroup_dirs(p.pid).items())) for p in sleepers}
    assert len(groups) == 1, "all processes of the job share one cgroup"
    dirs = dict(groups.pop())
    assert all(d.name.startswith("assay-job-") and d.is_dir() for d in dirs.values())
    if SUPPORT.version == 1:
        assert (dirs["memory"] / "memory.limit_in_bytes").read_text() == f"{200 << 20}\n"
        # bubblewrap's own two processes are in the cgroup too
        assert (dirs["pids"] / "pids.max").read_text() == "34\n"
        assert (dirs["cpu"] / "cpu.cfs_quota_us").read_text() == "100000\n"
    env.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not any(d.exists() for d in dirs.values()), "the cgroup is removed after the job"
    await wait_for(lambda: not any(p.is_running() for p in sleepers), timeout=5,
                   what="the job's children to be killed")


@needs_cgroup
async def test_a_cgroup_slow_to_let_go_is_removed_off_the_event_loop(
        work_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the kernel still holds a killed job's processes, removing its cgroup waits; the
    worker's event loop (every workflow and activity of the process) must not wait with it."""
    real = cgroup_module.remove_dir
    refusals = [2]
    seen: list[tuple[Path, int]] = []

    def slow(path: Path) -> bool:
        if not path.exists():  # the sandbox clearing a leftover name before making its own
            return real(path)
        seen.append((path, threading.get_ident()))
        if refusals[0] > 0:
            refusals[0] -= 1
            return False  # as the kernel's EBUSY: the cgroup waits and tries again
        return real(path)

    monkeypatch.setattr(cgroup_module, "remove_dir", slow)
    outcome = await run(Sandbox(work_dir=work_dir), "print('done')")
    assert outcome.outcome == "succeeded", outcome.reason
    assert len(seen) >= 3, "the removal was refused twice, then done"
    loop_thread = threading.get_ident()
    assert all(thread != loop_thread for _, thread in seen)
    assert not any(path.exists() for path, _ in seen), "the cgroup is gone when the job is"


@needs_cgroup
async def test_fork_bomb_is_bounded_and_its_cgroup_removed(work_dir: Path) -> None:
    sandbox = Sandbox(work_dir=work_dir, max_processes=32)

    def ours() -> dict[Path, set[Path]]:  # other processes' jobs may come and go meanwhile
        return {p: {c for c in p.iterdir() if c.name.startswith(f"assay-job-{worker_id()}-")}
                for p in set(SUPPORT.parents.values())}

    before = ours()
    outcome = await run(sandbox, "import os\nwhile True:\n    os.fork()\n", timeout_s=10.0)
    assert outcome.outcome == "sandbox_violation"
    assert "limit of 32 processes" in outcome.reason
    assert "in cgroup assay-job-" in outcome.isolation and "pids" in outcome.isolation
    assert ours() == before
    await wait_for(lambda: not processes_of(job_uid(outcome)), timeout=5,
                   what="the forks to be killed")


USERNS = """
import ctypes, json, os, platform, subprocess
libc = ctypes.CDLL(None, use_errno=True)
def call(*args):
    result = libc.syscall(*args)
    if result == 0:
        os._exit(0)  # a cloned child: leave at once
    return os.strerror(ctypes.get_errno()) if result < 0 else "allowed"
def run(*argv):
    done = subprocess.run(argv, capture_output=True, text=True)
    return f"exit {done.returncode}: {done.stderr.strip()}"
os.mkdir("mnt")
found = {
    "unshare": os.strerror(ctypes.get_errno()) if libc.unshare(0x10000000) else "allowed",
    "unshare -U": run("unshare", "-U", "true"),
    "tmpfs in a user namespace": run("unshare", "-Urm", "mount", "-t", "tmpfs", "none", "mnt"),
    "tmpfs": run("mount", "-t", "tmpfs", "none", "mnt"),
}
if platform.machine() == "x86_64":
    found["clone"] = call(56, 0x10000000 | 17, 0, 0, 0, 0)
    found["clone3"] = call(435, 0, 0)
json.dump(found, open("metrics.json", "w"))
"""


async def test_a_job_cannot_create_a_user_namespace_or_mount_a_tmpfs(work_dir: Path) -> None:
    sandbox = Sandbox(work_dir=work_dir)
    if sandbox.status.mode != "bwrap":
        lacking("user namespaces are denied by bubblewrap's seccomp filter; "
                f"this machine runs jobs with {sandbox.status.mode}")
    assert sandbox.status.userns_denied and "user namespaces denied" in sandbox.status.summary
    outcome = await run(sandbox, USERNS)
    assert outcome.outcome == "succeeded", outcome.stderr_tail
    found = outcome.metrics
    assert found["unshare"] == "Operation not permitted"
    assert found["unshare -U"].startswith("exit 1: unshare: unshare failed: Operation not perm")
    assert found["tmpfs in a user namespace"].startswith("exit 1: unshare: unshare failed")
    assert found["tmpfs"].startswith("exit 32: mount: ")
    if platform.machine() == "x86_64":
        assert found["clone"] == "Operation not permitted"
        assert found["clone3"] == "Function not implemented"
    assert not os.path.ismount(Path(outcome.workspace, "mnt"))


async def test_a_job_whose_files_together_outgrow_the_disk_quota_is_stopped(
        work_dir: Path) -> None:
    sandbox = Sandbox(work_dir=work_dir, max_disk_mb=32, max_file_size_mb=8,
                      heartbeat_every_s=0.05)
    code = ("import time\nfor i in range(100):\n"
            "    open(f'part-{i}.bin', 'wb').write(b'x' * (1 << 20))\n"
            "open('all-written', 'w').close()\ntime.sleep(60)\n")
    outcome = await run(sandbox, code, timeout_s=20.0)
    assert outcome.outcome == "sandbox_violation", outcome.reason
    assert "grew beyond the per-job disk quota of 32 MiB" in outcome.reason
    assert outcome.duration_s < 20.0, "stopped while it ran, not at the timeout"


async def test_a_job_that_outgrew_the_disk_quota_before_anyone_looked_is_reported(
        work_dir: Path) -> None:
    sandbox = Sandbox(work_dir=work_dir, max_disk_mb=16, heartbeat_every_s=5.0)
    code = "for i in range(6):\n    open(f'part-{i}.bin', 'wb').write(b'x' * (4 << 20))\n"
    outcome = await run(sandbox, code, timeout_s=20.0)
    assert outcome.exit_code == 0
    assert outcome.outcome == "sandbox_violation"
    assert "disk quota of 16 MiB" in outcome.reason and "grew by 24" in outcome.reason


async def test_inputs_do_not_count_against_the_disk_quota(work_dir: Path, tmp_path: Path) -> None:
    from activities.artifacts.store import LocalArtifactStore
    from workflows.contracts.plan import InputFile

    data = os.urandom(12 << 20)
    source = tmp_path / "big.bin"
    source.write_bytes(data)
    store = LocalArtifactStore(tmp_path / "store")
    stored = store.put(source)
    sandbox = Sandbox(work_dir=work_dir, max_disk_mb=8, store=store)
    outcome = await run(sandbox, "open('small.txt', 'w').write('ok')", inputs=[
        InputFile(name="big.bin", path=str(source), sha256=stored.sha256, size=len(data))])
    assert outcome.outcome == "succeeded", outcome.reason
