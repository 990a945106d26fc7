"""Finding the cgroup hierarchies, and a job cgroup's files under cgroup v2.

The machine these tests run on may offer cgroup v1 only (then the v2 files are checked on a
directory standing in for the hierarchy); the jobs' own cgroups are exercised for real in
``test_sandbox_guards``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from activities.sandbox.cgroup import JobCgroup
from activities.sandbox.hierarchy import CgroupSupport, cgroup_support, find_hierarchies
from activities.sandbox.limits import Limits

V1_MOUNTS = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 /docker/abc /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
V1_MEMBERSHIP = """\
9:name=systemd:/
8:pids:/docker/abc/x
4:memory:/process_api/7ac
1:cpu,cpuacct:/
0::/
"""


def test_v1_hierarchies_are_found_below_the_workers_own_cgroup() -> None:
    unified, legacy = find_hierarchies(V1_MOUNTS, V1_MEMBERSHIP)
    assert unified == Path("/sys/fs/cgroup/unified")
    assert legacy == {"memory": Path("/sys/fs/cgroup/memory/process_api/7ac"),
                      "pids": Path("/sys/fs/cgroup/pids/x"),  # a mount of a sub-tree
                      "cpu": Path("/sys/fs/cgroup/cpu,cpuacct"),
                      "cpuacct": Path("/sys/fs/cgroup/cpu,cpuacct")}


def test_a_v2_only_container_is_found_with_escaped_mount_points() -> None:
    mounts = "50 40 0:40 / /sys/fs/my\\040cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n"
    unified, legacy = find_hierarchies(mounts, "0::/worker\n")
    assert unified == Path("/sys/fs/my cgroup/worker") and legacy == {}


def test_no_memory_controller_means_per_process_limits_and_says_why(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    unified = tmp_path / "unified"
    unified.mkdir()
    (unified / "cgroup.controllers").write_text("\n")  # all controllers bound to v1, or none
    (proc / "mountinfo").write_text(f"41 31 0:38 / {unified} rw - cgroup2 cgroup2 rw\n")
    (proc / "cgroup").write_text("0::/\n")
    support = cgroup_support(proc)
    assert not support.available
    assert support.summary == ("per-process limits only: a job's processes together may "
                               f"exceed its memory (cgroup v2 at {unified} offers no memory "
                               "controller)")
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "mountinfo").write_text("")
    (bare / "cgroup").write_text("0::/\n")
    assert cgroup_support(bare).problem == (
        "no cgroup hierarchy with the memory controller is mounted")


def test_a_v2_job_cgroup_gets_the_jobs_limits_and_reports_its_peak(tmp_path: Path) -> None:
    support = CgroupSupport(2, {c: tmp_path for c in ("memory", "pids", "cpu")})
    assert support.summary == "per-job cgroup (v2: memory, pids, cpu)"
    limits = Limits(memory_mb=300, timeout_s=10, cpu_s=11, processes=40, open_files=64,
                    file_size_mb=8, threads_hint=1, cpus=1.5)
    cgroup = JobCgroup.create(support, limits)
    path = cgroup.paths[0]
    assert cgroup.paths == [path] and path.parent == tmp_path
    assert {f.name: f.read_text() for f in path.iterdir()} == {
        "memory.max": str(300 << 20), "pids.max": "42", "cpu.max": "150000 100000"}
    assert cgroup.join_argv()[-3:] == ["self", "1", str(path / "cgroup.procs")]
    (path / "memory.peak").write_text("123456789\n")
    (path / "memory.events").write_text("low 0\nhigh 0\nmax 7\noom 2\noom_kill 2\n")
    assert cgroup.usage().cpu_s is None  # no cpu.stat: no count, rather than a false zero
    (path / "cpu.stat").write_text("usage_usec 1520000\nuser_usec 1500000\nsystem_usec 20000\n")
    usage = cgroup.usage()
    assert (usage.peak_bytes, usage.oom_kills, usage.cpu_s) == (123456789, 2, 1.52)


def test_a_v1_job_cgroup_counts_cpu_time_only_with_the_cpuacct_controller(
        tmp_path: Path) -> None:
    limits = Limits(memory_mb=64, timeout_s=1, cpu_s=2, processes=4, open_files=64,
                    file_size_mb=8, threads_hint=1)
    without = {c: tmp_path / "a" / c for c in ("memory", "pids", "cpu")}
    for parent in without.values():
        parent.mkdir(parents=True)
    assert JobCgroup.create(CgroupSupport(1, without), limits).usage().cpu_s is None
    parents = {c: tmp_path / "b" / c for c in ("memory", "pids", "cpu,cpuacct")}
    for parent in parents.values():
        parent.mkdir(parents=True)
    parents["cpuacct"] = parents["cpu"] = parents.pop("cpu,cpuacct")  # mounted together
    cgroup = JobCgroup.create(CgroupSupport(1, parents), limits)
    assert len(cgroup.paths) == 3
    (cgroup.dirs["cpuacct"] / "cpuacct.usage").write_text("750000000\n")
    assert cgroup.usage().cpu_s == 0.75


def test_a_v1_job_moves_its_own_thread_in_through_tasks_once_per_hierarchy(
        tmp_path: Path) -> None:
    """``0`` in ``tasks`` spares every job start the kernel's grace-period wait."""
    parents = {c: tmp_path / c for c in ("memory", "pids", "cpu,cpuacct")}
    for parent in parents.values():
        parent.mkdir()
    parents["cpuacct"] = parents["cpu"] = parents.pop("cpu,cpuacct")
    limits = Limits(memory_mb=64, timeout_s=1, cpu_s=2, processes=4, open_files=64,
                    file_size_mb=8, threads_hint=1)
    cgroup = JobCgroup.create(CgroupSupport(1, parents), limits)
    argv = cgroup.join_argv()
    assert argv[-5:] == ["0", "3", *(str(p / "tasks") for p in cgroup.paths)]
    # The shell writes what it is given: into plain files here, then runs the rest.
    done = subprocess.run([*argv, "true"], check=False)
    assert done.returncode == 0
    assert [(p / "tasks").read_text() for p in cgroup.paths] == ["0\n"] * 3


def test_a_v2_job_joins_with_its_pid_and_one_that_cannot_exits_125_before_running(
        tmp_path: Path) -> None:
    support = CgroupSupport(2, {c: tmp_path for c in ("memory", "pids", "cpu")})
    limits = Limits(memory_mb=64, timeout_s=1, cpu_s=2, processes=4, open_files=64,
                    file_size_mb=8, threads_hint=1)
    cgroup = JobCgroup.create(support, limits)
    ran = tmp_path / "ran"
    done = subprocess.run([*cgroup.join_argv(), "touch", str(ran)], check=False)
    written = (cgroup.paths[0] / "cgroup.procs").read_text()
    assert done.returncode == 0 and ran.exists() and written.strip().isdigit()  # its own pid
    ran.unlink()
    (cgroup.paths[0] / "cgroup.procs").unlink()
    (cgroup.paths[0] / "cgroup.procs").mkdir()  # unwritable, even for root
    done = subprocess.run([*cgroup.join_argv(), "touch", str(ran)], check=False,
                          stderr=subprocess.DEVNULL)
    assert done.returncode == 125 and not ran.exists()
