"""Finding a running job's processes by walking down from its first one."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import psutil
import pytest

import activities.sandbox.descendants as found_below
from activities.sandbox.descendants import descendants
from activities.sandbox.process import _Samples  # pyright: ignore[reportPrivateUsage]

# Two children and a grandchild, all sleeping; the grandchild is started by a second thread
# of a Python child, so only that thread's own children file lists it.
TREE = ("sleep 30 & sh -c 'sleep 30' & " + sys.executable + " -c \"import subprocess, "
        "threading; t = threading.Thread(target=lambda: subprocess.run(['sleep', '30'])); "
        "t.start(); t.join()\" & wait")


def _settled(pid: int, count: int) -> list[int]:
    """The descendants psutil sees once there are ``count`` of them."""
    for _ in range(500):
        kids = [p.pid for p in psutil.Process(pid).children(recursive=True)]
        if len(kids) >= count:
            return kids
        time.sleep(0.01)
    raise AssertionError(f"the tree of {pid} never grew to {count} processes")


@pytest.fixture
def tree() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sh", "-c", TREE])
    try:
        yield proc
    finally:
        for child in psutil.Process(proc.pid).children(recursive=True):
            child.kill()
        proc.kill()
        proc.wait()


def test_the_walk_finds_what_psutil_finds_and_nothing_else(
        tree: subprocess.Popen[bytes]) -> None:
    # sh's two sleeps' shell, its sleep, the python child and the sleep its thread started
    expected = _settled(tree.pid, 5)
    assert sorted(descendants(tree.pid) or []) == sorted(expected)


def test_a_child_started_by_another_thread_is_found(tree: subprocess.Popen[bytes]) -> None:
    _settled(tree.pid, 5)
    python = next(p for p in psutil.Process(tree.pid).children()
                  if p.name().startswith("python"))
    (grandchild,) = python.children()
    assert grandchild.pid in (descendants(tree.pid) or [])
    assert descendants(python.pid) == [grandchild.pid]


def test_a_process_that_ended_has_none() -> None:
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert descendants(proc.pid) == []


def test_a_kernel_without_children_files_leaves_it_to_psutil(
        tree: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _settled(tree.pid, 5)
    monkeypatch.setattr(found_below, "_children_files", lambda: False)
    assert descendants(tree.pid) is None
    samples = _Samples()
    samples.take(tree.pid)  # psutil's scan instead: the same processes are sampled
    assert samples.peak_kb >= max(_high_water(pid) for pid in expected) > 0


def test_a_sample_reads_the_processes_the_walk_finds(tree: subprocess.Popen[bytes]) -> None:
    expected = _settled(tree.pid, 5)
    samples = _Samples()
    samples.take(tree.pid)
    # the python child is the largest of them: its peak is what the sample keeps
    assert samples.peak_kb >= max(_high_water(pid) for pid in expected) > 0


def _high_water(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
