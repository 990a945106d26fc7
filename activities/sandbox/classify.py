"""Turn how a job ended into an outcome kind and a reason a person can act on.

The inputs are what the operating system and the interpreter said: the wait status, whether
the sandbox itself stopped the job, and the last Python exception in stderr. Each outcome kind
of :data:`workflows.contracts.execution.ExecutionOutcomeKind` has one place here that decides it.
"""

from __future__ import annotations

import errno
import os
import re
import signal
from dataclasses import dataclass

from activities.common.trees import MAX_DEPTH
from activities.sandbox.limits import Limits
from workflows.contracts.execution import ExecutionOutcomeKind

_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s?(?P<message>.*))?$")
_NAMED_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))"
                              r"(?::\s?(?P<message>.*))?$")
_PROCESS_LIMIT = re.compile(r"BlockingIOError: \[Errno 11\]|can't start new thread|"
                            r"fork: Resource temporarily unavailable")
_ERRNO = re.compile(r"\[Errno (?P<code>-?\d+)\][^:']*(?::\s*'(?P<path>[^']*)')?")
_MODULE = re.compile(r"No module named '(?P<name>[^']+)'")
_NETWORK_TYPES = ("ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
                  "ConnectionAbortedError", "gaierror", "herror", "URLError", "NewConnectionError",
                  "MaxRetryError", "ConnectError")
_NETWORK_ERRNOS = {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ECONNREFUSED,
                   errno.EADDRNOTAVAIL, errno.ENETDOWN}
_NETWORK_WORDS = ("name resolution", "Name or service not known", "Network is unreachable",
                  "Connection refused")
_DENIED_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}


@dataclass(frozen=True)
class Ending:
    """How a job's process ended, as observed by the sandbox.

    Attributes:
        exit_code: exit status if it exited.
        signal: signal number if a signal ended it.
        stopped_for: ``timeout``, ``disk`` or one of :data:`QUOTA_WORDS` if the sandbox
            stopped it (or found its working directory over a quota afterwards).
        stderr: the captured (possibly truncated) stderr text.
        oom_kills: processes the kernel killed because the job's cgroup ran out of memory.
    """

    exit_code: int | None
    signal: int | None
    stopped_for: str | None
    stderr: str
    oom_kills: int = 0


def decode_status(status: int, *, via_bwrap: bool) -> tuple[int | None, int | None]:
    """``(exit_code, signal)`` from a wait status.

    bubblewrap reports a command killed by signal N as exit status 128+N, so under bwrap
    statuses 129..192 are read as signals (a job exiting with e.g. ``sys.exit(137)`` on
    purpose would be misread; nothing else in the chain exits that way).
    """
    if os.WIFSIGNALED(status):
        return None, os.WTERMSIG(status)
    code = os.WEXITSTATUS(status)
    if via_bwrap and 128 < code <= 128 + 64:
        return None, code - 128
    return code, None


def last_exception(stderr: str) -> tuple[str, str] | None:
    """``(type, message)`` of the last uncaught Python exception in ``stderr``, if any."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent")]
    if not starts:
        return None
    for line in lines[starts[-1] + 1:]:
        if line and not line[0].isspace():
            found = _EXCEPTION.match(line)
            if found:
                return found["type"], found["message"] or ""
            break
    # Several processes wrote tracebacks at once and garbled the last one: best effort.
    for line in reversed(lines):
        found = _NAMED_EXCEPTION.match(line)
        if found:
            return found["type"], found["message"] or ""
    return None


def signal_name(number: int) -> str:
    """``SIGKILL`` for 9, or ``signal 77`` for numbers without a name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def classify(ending: Ending, *, limits: Limits, workspace: str,
             network_isolated: bool) -> tuple[ExecutionOutcomeKind, str]:
    """The outcome kind and a reason that says what happened and what to change."""
    if ending.stopped_for == "timeout":
        return "timeout", (f"stopped after the wall-clock limit of {limits.timeout_s:g} s; "
                           "raise resources.timeout_s or make the job faster")
    if ending.stopped_for == "disk":
        return "sandbox_violation", (
            f"stopped because free space on the disk of its working directory fell below "
            f"{limits.disk_reserve_mb} MiB while it ran; write less data or clean up as you go")
    if ending.stopped_for in QUOTA_WORDS:
        return "sandbox_violation", _quota_reason(ending.stopped_for, limits)
    if ending.oom_kills and ending.exit_code != 0:
        return "out_of_memory", (
            f"its processes together reached the job's memory limit of {limits.memory_mb} MiB "
            f"and the kernel killed {ending.oom_kills} of them; raise resources.memory_mb or "
            "use less memory at once (fewer worker processes, smaller batches)")
    if ending.signal is not None:
        return _by_signal(ending, limits)
    if ending.exit_code == 0:
        return "succeeded", "exited with status 0"
    return _by_exception(ending, limits=limits, workspace=workspace,
                         network_isolated=network_isolated)


QUOTA_WORDS = frozenset({"disk_quota", "file_quota", "tree_depth", "artifacts_size"})
"""Why the sandbox stopped a job for what it left on disk."""
KEEPS_NOTHING = QUOTA_WORDS | {"disk"}
"""Endings after which nothing the job wrote is kept: no artifact is stored, its working
directory is removed (it broke a quota, or drove the disk below its free-space reserve)."""


def _quota_reason(word: str, limits: Limits) -> str:
    if word == "disk_quota":
        return (f"its working directory grew beyond the per-job disk quota of {limits.disk_mb} "
                "MiB (ASSAY_JOB_MAX_DISK_MB); write less data, delete what you no longer need "
                "as you go, or ask the operator to raise the quota")
    if word == "file_quota":
        return (f"it created more than {limits.files} files and directories, the per-job "
                "limit (ASSAY_JOB_MAX_FILES); bundle many small files into an archive (zip, "
                "tar, parquet) or ask the operator to raise the limit")
    if word == "tree_depth":
        return ("it nested directories deeper than the sandbox reads (at most "
                f"{MAX_DEPTH} levels); keep its output tree shallow")
    return (f"its artifacts are larger read back than the sandbox stores (at most "
            f"{limits.artifact_mb} MiB each, ASSAY_ARTIFACT_MAX_MB, and {limits.artifacts_mb} "
            "MiB per job, ASSAY_JOB_MAX_ARTIFACTS_MB; a sparse file counts at its full size); "
            "write less data or ask the operator to raise the limits")


def _by_signal(ending: Ending, limits: Limits) -> tuple[ExecutionOutcomeKind, str]:
    number = ending.signal or 0
    name = signal_name(number)
    if number == signal.SIGXCPU:
        return "timeout", (f"used more than {limits.cpu_s} s of CPU time in one process "
                           f"({name}); raise resources.timeout_s or resources.cpus")
    if number == signal.SIGXFSZ:
        return "sandbox_violation", _file_size_reason(limits, name)
    if _mentions_memory(ending.stderr):
        return "out_of_memory", (f"ran out of memory at the limit of {limits.memory_mb} MiB "
                                 f"and was killed by {name}; raise resources.memory_mb")
    if number == signal.SIGKILL:
        return "killed", ("killed by SIGKILL from outside the sandbox (an operator, or the "
                          "kernel's out-of-memory killer if the machine ran short of memory)")
    return "killed", f"killed by {name}"


_MEMORY_WORDS = ("std::bad_alloc", "Cannot allocate memory", "MemoryError",
                 "failed to map segment from shared object")


def _mentions_memory(stderr: str) -> bool:
    tail = stderr[-4000:]
    return any(word in tail for word in _MEMORY_WORDS)


def _file_size_reason(limits: Limits, detail: str) -> str:
    return (f"wrote a file larger than the sandbox's file-size limit of {limits.file_size_mb} "
            f"MiB ({detail}); write smaller files or ask the operator to raise the limit")


def _by_exception(ending: Ending, *, limits: Limits, workspace: str,
                  network_isolated: bool) -> tuple[ExecutionOutcomeKind, str]:
    status = f"exited with status {ending.exit_code}"
    found = last_exception(ending.stderr)
    if found is None:
        if _mentions_memory(ending.stderr):
            return "out_of_memory", f"{status} after running out of memory ({limits.memory_mb} MiB)"
        said = "see stderr" if ending.stderr.strip() else "it wrote nothing to stderr"
        return "nonzero_exit", f"{status}; {said}"
    kind, message = found
    said = f"{kind}: {message}" if message else kind
    code, path = _errno_of(message)
    if (kind.endswith("MemoryError") or code == errno.ENOMEM
            or (kind.endswith("ImportError") and _mentions_memory(ending.stderr))):
        return "out_of_memory", (f"ran out of memory at the limit of {limits.memory_mb} MiB "
                                 f"({said}); raise resources.memory_mb or use less memory")
    module = _MODULE.search(message)
    if kind.endswith("ModuleNotFoundError") and module:
        return "missing_dependency", (
            f"module {module['name']!r} is not installed for the sandbox's Python ({said}); "
            "add its package to the job's requirements or name an environment that has it")
    if code == errno.EFBIG:
        return "sandbox_violation", _file_size_reason(limits, said)
    if code in _DENIED_ERRNOS and path is not None and _outside(path, workspace):
        return "sandbox_violation", (
            f"tried to write or open {path!r} outside its working directory, which the "
            f"sandbox forbids ({said}); write files only in the working directory")
    if network_isolated and _is_network(kind, message, code):
        return "sandbox_violation", (
            f"tried to use the network, which the sandbox blocks ({said}); pass the data the "
            "job needs as task inputs")
    if code == errno.EAGAIN or _PROCESS_LIMIT.search(ending.stderr[-20_000:]):
        return "sandbox_violation", (
            f"hit the sandbox's limit of {limits.processes} processes and threads ({said})")
    hint = ("; the job file, inputs and deps/ are read-only"
            if code in _DENIED_ERRNOS else "")
    return "nonzero_exit", f"{status}: {said}{hint}"


def _errno_of(message: str) -> tuple[int | None, str | None]:
    found = _ERRNO.search(message)
    if found is None:
        return None, None
    return int(found["code"]), found["path"]


def _outside(path: str, workspace: str) -> bool:
    full = os.path.normpath(os.path.join(workspace, path))
    return os.path.commonpath([full, workspace]) != workspace


def _is_network(kind: str, message: str, code: int | None) -> bool:
    short = kind.rsplit(".", 1)[-1]
    return (short in _NETWORK_TYPES or code in _NETWORK_ERRNOS
            or any(word in message for word in _NETWORK_WORDS))
