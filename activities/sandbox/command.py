"""The command line that starts one job inside the sandbox, and the uids jobs run as.

The command is a chain of small programs, each doing one thing before ``exec``-ing the next:
``sh`` (join the job's cgroup, where it has one; see :mod:`activities.sandbox.cgroup`) ->
``bwrap`` (namespaces, the filesystem view and a seccomp filter against user namespaces;
``bwrap`` mode only) -> ``setpriv`` (drop to the job's uid, no new privileges) -> ``prlimit``
(resource limits) -> the interpreter. Nothing runs Python code between ``fork`` and ``exec`` in
the multi-threaded worker.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from activities.sandbox.limits import Limits

SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "opt")
"""Top-level directories a job sees (read-only) under bwrap, besides the interpreter's own."""


@dataclass(frozen=True)
class Tools:
    """External programs the sandbox uses, and the interpreter jobs run with.

    Attributes:
        python: the job interpreter.
        prlimit: util-linux ``prlimit``.
        setpriv: util-linux ``setpriv``.
        kill: procps ``kill`` (to signal every process of a job's uid at once), if present.
        bwrap: bubblewrap, if present.
        prefixes: directories holding the interpreter and its packages, shortest first.
        masked: files under ``prefixes`` a job sees empty under bwrap: the worker's own
            import hooks (see :func:`activities.sandbox.isolation.worker_hooks`).
    """

    python: str
    prlimit: str
    setpriv: str
    kill: str | None
    bwrap: str | None
    prefixes: tuple[str, ...]
    masked: tuple[str, ...] = ()


class UidPool:
    """Unprivileged uids for jobs of a root worker: one per running job, never shared.

    RLIMIT_NPROC counts every process of a uid, so a uid of its own gives each job its own
    process budget, and lets the sandbox kill everything the job started (even processes that
    left its session) with a single ``kill -1`` as that uid. Each worker process takes a block
    of uids derived from its pid, so concurrent workers on one machine do not collide; the
    uids need no ``/etc/passwd`` entry.
    """

    BASE = 1_000_000_000
    SLOTS = 256

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._free = list(range(self.SLOTS))

    def _base(self) -> int:
        # pids stay below 2**22 on Linux, so blocks stay below 2**31 (safe for every tool).
        return self.BASE + (os.getpid() % (1 << 22)) * self.SLOTS

    @contextmanager
    def lease(self) -> Generator[int | None]:
        """A uid for one job while the context is open, or ``None`` if not running as root."""
        if os.geteuid() != 0:
            yield None
            return
        with self._lock:
            if not self._free:
                raise RuntimeError(f"more than {self.SLOTS} concurrent jobs in one worker")
            slot = self._free.pop(0)
        try:
            yield self._base() + slot
        finally:
            with self._lock:
                self._free.append(slot)


uid_pool = UidPool()
"""Process-wide: uids belong to the worker process, whichever Sandbox instance leases them."""


class _Mounts:
    """bwrap mount arguments, creating each mount point's parents world-searchable."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self._dirs = {"/", "/dev", "/proc"}
        self._bound: list[str] = []

    def covered(self, path: str) -> bool:
        return any(path == b or path.startswith(b.rstrip("/") + "/") for b in self._bound)

    def _parents(self, dest: str) -> None:
        for parent in reversed(Path(dest).parents):
            name = str(parent)
            if name in self._dirs or self.covered(name):
                continue
            self._dirs.add(name)
            # bwrap would create missing parents 0700, unreachable for the job's uid.
            self.args += ["--perms", "0755", "--dir", name]

    def bind(self, src: str, dest: str, *, read_only: bool) -> None:
        if read_only and self.covered(dest):
            return
        self._parents(dest)
        self.args += ["--ro-bind" if read_only else "--bind", src, dest]
        self._bound.append(dest)

    def raw(self, *args: str) -> None:
        self.args += args


def _bwrap_args(tools: Tools, workspace: Path, *, as_root: bool,
                seccomp_fd: int | None) -> tuple[list[str], str]:
    """Options of ``bwrap`` for one job, and the TMPDIR the job sees."""
    assert tools.bwrap is not None
    head = [tools.bwrap, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    if seccomp_fd is not None:
        head += ["--seccomp", str(seccomp_fd)]
    if as_root:
        # Only what is needed to enter the job's 0700 directory and switch to the job's
        # uid; setpriv's switch to that uid clears them all again.
        head += ["--cap-drop", "ALL", "--cap-add", "CAP_DAC_READ_SEARCH",
                 "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    mounts = _Mounts()
    mounts.raw("--tmpfs", "/")
    for name in SYSTEM_DIRS:
        path = Path("/", name)
        if path.is_symlink():
            mounts.raw("--symlink", os.readlink(path), str(path))
        elif path.is_dir():
            mounts.bind(str(path), str(path), read_only=True)
    for prefix in tools.prefixes:
        mounts.bind(prefix, prefix, read_only=True)
    for path in tools.masked:
        mounts.raw("--ro-bind", "/dev/null", path)
    mounts.raw("--dev", "/dev", "--proc", "/proc")
    scratch = str(workspace / ".assay" / "tmp")
    tmpdir = scratch
    if not workspace.is_relative_to("/tmp") and not any(
            Path(prefix).is_relative_to("/tmp") for prefix in tools.prefixes):
        # Disk-backed /tmp inside the job's own tree (a tmpfs would be unaccounted RAM);
        # not over an interpreter that lives in /tmp, which it would hide (TMPDIR serves).
        mounts.bind(scratch, "/tmp", read_only=False)
        tmpdir = "/tmp"
    mounts.bind(scratch, "/dev/shm", read_only=False)
    mounts.bind(str(workspace), str(workspace), read_only=False)
    mounts.raw("--remount-ro", "/", "--chdir", str(workspace), "--")
    return head + mounts.args, tmpdir


def build_argv(mode: Literal["bwrap", "rlimits"], tools: Tools, *, workspace: Path,
               uid: int | None, limits: Limits, job: list[str], nproc_offset: int = 0,
               seccomp_fd: int | None = None) -> tuple[list[str], str]:
    """The full command for one job, and the TMPDIR it should get.

    Args:
        mode: ``bwrap`` or ``rlimits``.
        tools: the programs to chain.
        workspace: the job's working directory (absolute).
        uid: the job's dedicated uid, or ``None`` to keep the worker's.
        limits: the job's resource limits.
        job: interpreter, script and arguments.
        nproc_offset: processes the job's uid already has (when it is the worker's uid).
        seccomp_fd: descriptor of the seccomp program bwrap loads (see
            :mod:`activities.sandbox.seccomp`); the child must inherit it.
    """
    prefix: list[str] = []
    tmpdir = str(workspace / ".assay" / "tmp")
    if mode == "bwrap":
        prefix, tmpdir = _bwrap_args(tools, workspace, as_root=uid is not None,
                                     seccomp_fd=seccomp_fd)
    switch = [tools.setpriv]
    if uid is not None:
        switch += ["--reuid", str(uid), "--regid", str(uid), "--clear-groups", "--inh-caps=-all"]
    # The job dies with its parent, so a worker killed mid-job leaves no job running on
    # behind its retry (bwrap adds --die-with-parent on top of this).
    switch += ["--no-new-privs", "--pdeathsig", "KILL", "--"]
    return [*prefix, *switch, *limits.prlimit_args(tools.prlimit, nproc_offset=nproc_offset),
            *job], tmpdir
