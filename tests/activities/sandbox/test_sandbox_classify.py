"""Outcome classification from exit status and stderr, and the bounded output capture."""

from __future__ import annotations

import os
import signal

import pytest

from activities.sandbox.classify import Ending, classify, decode_status, last_exception
from activities.sandbox.limits import Limits
from activities.sandbox.output import BoundedCapture
from workflows.contracts.plan import Resources

LIMITS = Limits.for_job(Resources(memory_mb=512, timeout_s=10), max_memory_mb=8192,
                        max_timeout_s=3600, processes=64, open_files=256, file_size_mb=100)
WORKSPACE = "/data/work/run/t/attempt-1"


def traceback(line: str) -> str:
    return f'Traceback (most recent call last):\n  File "job.py", line 1, in <module>\n{line}\n'


def verdict(stderr: str, *, code: int | None = 1, sig: int | None = None,
            stopped: str | None = None, network: bool = True) -> tuple[str, str]:
    return classify(Ending(code, sig, stopped, stderr), limits=LIMITS, workspace=WORKSPACE,
                    network_isolated=network)


@pytest.mark.parametrize(("stderr", "kind", "words"), [
    (traceback("MemoryError"), "out_of_memory", "512 MiB"),
    (traceback("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 8 GiB"),
     "out_of_memory", "_ArrayMemoryError"),
    (traceback("ModuleNotFoundError: No module named 'scipy.stats'"), "missing_dependency",
     "'scipy.stats'"),
    (traceback("OSError: [Errno 30] Read-only file system: '/usr/x'"), "sandbox_violation",
     "'/usr/x' outside"),
    (traceback("PermissionError: [Errno 13] Permission denied: '../x'"), "sandbox_violation",
     "'../x' outside"),
    (traceback("PermissionError: [Errno 13] Permission denied: 'data.csv'"), "nonzero_exit",
     "inputs and deps/ are read-only"),
    (traceback("OSError: [Errno 27] File too large"), "sandbox_violation", "100 MiB"),
    (traceback("socket.gaierror: [Errno -3] Temporary failure in name resolution"),
     "sandbox_violation", "network"),
    (traceback("OSError: [Errno 101] Network is unreachable"), "sandbox_violation", "network"),
    (traceback("BlockingIOError: [Errno 11] Resource temporarily unavailable"),
     "sandbox_violation", "64 processes"),
    (traceback("ValueError: bad column"), "nonzero_exit", "ValueError: bad column"),
    ("  File x\nImportError: libopenblas.so: failed to map segment from shared object\n"
     "Traceback (most recent call last):\n  File x\nImportError: \n", "out_of_memory",
     "512 MiB"),
    ("", "nonzero_exit", "wrote nothing to stderr"),
])
def test_python_failures_are_classified(stderr: str, kind: str, words: str) -> None:
    outcome, reason = verdict(stderr)
    assert outcome == kind and words in reason


def test_network_errors_are_ordinary_failures_without_network_isolation() -> None:
    stderr = traceback("ConnectionRefusedError: [Errno 111] Connection refused")
    assert verdict(stderr, network=False)[0] == "nonzero_exit"
    assert verdict(stderr, network=True)[0] == "sandbox_violation"


def test_chained_exceptions_use_the_last_traceback() -> None:
    stderr = (traceback("KeyError: 'x'") + "\nDuring handling of the above exception, another "
              "exception occurred:\n\n" + traceback("MemoryError"))
    assert last_exception(stderr) == ("MemoryError", "")


def test_garbled_tracebacks_of_a_fork_bomb_still_show_the_process_limit() -> None:
    stderr = ("Traceback (most recent call last):\n  File \"job.py\", line 3\nTraceback (most "
              "recent call last):\nos.fork()os.fork()\nBlockingIOError: [Errno 11] Resource "
              "temporarily unavailable\nTraceback (most recent call last):\n  File \"job.py\"\n"
              "BlockingIOError\n")
    outcome, reason = verdict(stderr)
    assert outcome == "sandbox_violation" and "64 processes" in reason


@pytest.mark.parametrize(("sig", "stopped", "kind", "words"), [
    (None, "timeout", "timeout", "wall-clock limit of 10 s"),
    (None, "disk", "sandbox_violation", "fell below 0 MiB"),
    (signal.SIGXCPU, None, "timeout", "CPU time"),
    (signal.SIGXFSZ, None, "sandbox_violation", "file-size limit"),
    (signal.SIGKILL, None, "killed", "out-of-memory killer"),
    (signal.SIGSEGV, None, "killed", "SIGSEGV"),
])
def test_signals_and_sandbox_stops_are_classified(sig: int | None, stopped: str | None,
                                                  kind: str, words: str) -> None:
    outcome, reason = verdict("", code=None, sig=sig, stopped=stopped)
    assert outcome == kind and words in reason


def test_abort_after_bad_alloc_is_out_of_memory() -> None:
    stderr = "terminate called after throwing an instance of 'std::bad_alloc'\n"
    assert verdict(stderr, code=None, sig=signal.SIGABRT)[0] == "out_of_memory"


def test_exit_zero_succeeds() -> None:
    assert verdict("warnings only", code=0) == ("succeeded", "exited with status 0")


def test_bwrap_reports_signals_as_128_plus_n() -> None:
    exited_137 = 137 << 8
    assert decode_status(exited_137, via_bwrap=True) == (None, 9)
    assert decode_status(exited_137, via_bwrap=False) == (137, None)
    assert decode_status(signal.SIGTERM, via_bwrap=False) == (None, signal.SIGTERM)
    assert os.WIFSIGNALED(signal.SIGTERM)


def test_limits_are_capped_by_the_worker_ceilings() -> None:
    limits = Limits.for_job(Resources(memory_mb=64_000, timeout_s=90_000, cpus=2),
                            max_memory_mb=4096, max_timeout_s=600, processes=32,
                            open_files=128, file_size_mb=10)
    assert (limits.memory_mb, limits.timeout_s, limits.cpu_s) == (4096, 600, 1201)
    assert f"--as={4096 << 20}" in limits.prlimit_args("prlimit")
    assert "--nproc=40" in limits.prlimit_args("prlimit", nproc_offset=8)


async def test_capture_keeps_head_and_tail_and_counts_everything() -> None:
    capture = BoundedCapture(limit=100)
    for index in range(1000):
        capture.data_received(f"{index:04d}\n".encode())
    text = capture.text()
    assert capture.total == 5000 and capture.truncated
    assert text.startswith("0000\n0001\n") and text.endswith("0998\n0999\n")
    assert "[... 4900 bytes omitted ...]" in text


async def test_capture_below_the_limit_is_verbatim() -> None:
    capture = BoundedCapture(limit=100)
    capture.data_received(b"hello ")
    capture.data_received("wörld".encode())
    assert capture.text() == "hello wörld" and not capture.truncated
