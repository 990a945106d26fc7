"""Which isolation the sandbox can really provide on this machine, and why.

Isolation is measured, not assumed: :func:`isolation_status` runs ``python -c pass`` through
the exact command the sandbox would use and reports what works. ``bwrap`` gives a private
network (none), a read-only view of the system with only the working directory writable, and a
pid namespace, and denies user namespaces to the job (see :mod:`activities.sandbox.seccomp`);
``rlimits`` is the fallback when bubblewrap is missing or cannot create namespaces here. In both
modes a root worker runs each job as a dedicated unprivileged uid, which is what makes the
process limit (RLIMIT_NPROC) bite: the kernel never enforces it for root. Whether a job gets a
cgroup of its own (one memory budget for all its processes) is measured too (see
:mod:`activities.sandbox.cgroup`), and so is whether the probe job could create a user namespace.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from activities.sandbox.command import Tools, build_argv, uid_pool
from activities.sandbox.hierarchy import CgroupSupport, cgroup_support
from activities.sandbox.limits import Limits
from activities.sandbox.seccomp import filter_fd
from workflows.contracts.plan import Resources

Mode = Literal["bwrap", "rlimits", "unavailable"]
MODES = ("auto", "bwrap", "rlimits")
_PROBE_TIMEOUT_S = 30
_PREFIX_CODE = ("import json, sys; print(json.dumps([sys.prefix, sys.base_prefix, "
                "sys.exec_prefix, sys.base_exec_prefix]))")
# The probe job: does a job get to create a user namespace? (No answer if ctypes is missing.)
_USERNS_CODE = ("try:\n import ctypes\n made = ctypes.CDLL(None).unshare(0x10000000) == 0\n"
                "except Exception:\n made = None\nprint('userns', made)")


@dataclass(frozen=True)
class IsolationStatus:
    """What the sandbox will do for a requested isolation mode.

    Attributes:
        requested: the mode asked for (``auto``, ``bwrap`` or ``rlimits``).
        mode: the mode in effect, or ``unavailable`` when no job can run.
        ok: whether jobs can run as requested.
        detail: why this mode was chosen, or what is wrong and how to fix it.
        tools: the external programs and interpreter directories the sandbox uses.
        dedicated_uid: jobs run as their own unprivileged uid (the worker runs as root).
        cgroups: whether (and how) each job gets a cgroup of its own.
        userns_denied: the probe job could not create a user namespace.
    """

    requested: str
    mode: Mode
    ok: bool
    detail: str
    tools: Tools = field(repr=False)
    dedicated_uid: bool = False
    cgroups: CgroupSupport = field(default_factory=lambda: CgroupSupport.unavailable("unprobed"))
    userns_denied: bool = False

    @property
    def network_isolated(self) -> bool:
        """Jobs cannot open network connections (not even to 127.0.0.1)."""
        return self.mode == "bwrap"

    @property
    def pid_namespace(self) -> bool:
        """Jobs see only their own processes, and all of them die with the job."""
        return self.mode == "bwrap"

    @property
    def summary(self) -> str:
        """One line for ``assay check`` and the execution record."""
        if not self.ok:
            return f"sandbox unavailable ({self.requested}): {self.detail}"
        who = ("each job runs as its own unprivileged uid" if self.dedicated_uid
               else "jobs run as the worker's own user")
        userns = ("user namespaces denied" if self.userns_denied else
                  "user namespaces NOT denied (a job may create one and mount file systems in it)")
        tail = (f"{userns}; {who}; {self.cgroups.summary}; "
                "rlimits on memory, CPU, processes, files per process")
        if self.mode == "bwrap":
            return ("bwrap: no network, read-only filesystem except the working directory, "
                    f"own pid namespace, {tail}")
        guard = ("writes outside the working directory blocked by file permissions only "
                 "(world-writable directories such as /tmp stay writable)"
                 if self.dedicated_uid else "files outside the working directory NOT protected")
        return (f"rlimits only ({self.detail}): network NOT isolated, {guard}, no pid "
                f"namespace, {tail}")


class SandboxUnavailableError(RuntimeError):
    """The requested isolation cannot run jobs on this machine; the message says why."""


@functools.lru_cache(maxsize=16)
def isolation_status(mode: str = "auto", *, python: str = sys.executable,
                     bwrap: str | None = None) -> IsolationStatus:
    """Probe which isolation works here for jobs run by ``python``.

    Args:
        mode: ``auto`` (bwrap if it works, else rlimits), ``bwrap`` or ``rlimits``.
        python: the interpreter jobs run with.
        bwrap: path of the bubblewrap binary; looked up on ``PATH`` when ``None``.

    Raises:
        ValueError: ``mode`` is not one of ``auto``, ``bwrap``, ``rlimits``.
    """
    if mode not in MODES:
        raise ValueError(f"sandbox isolation {mode!r} is not one of {', '.join(MODES)}")
    root = os.geteuid() == 0
    tools, problem = _find_tools(python, bwrap)
    if problem:
        return IsolationStatus(mode, "unavailable", False, problem, tools, root)
    cgroups = cgroup_support()
    bwrap_problem = "isolation=rlimits requested"
    if mode in ("auto", "bwrap"):
        bwrap_problem, denied = _bwrap_problem(tools, bwrap)
        if not bwrap_problem:
            return IsolationStatus(mode, "bwrap", True, f"bubblewrap {tools.bwrap}", tools,
                                   root, cgroups, denied)
        if mode == "bwrap":
            return IsolationStatus(mode, "unavailable", False,
                                   f"{bwrap_problem}; install bubblewrap (apt-get install "
                                   "bubblewrap) or set ASSAY_SANDBOX_ISOLATION=rlimits",
                                   tools, root)
    failure, denied = _probe("rlimits", tools)
    if failure:
        hint = (" (jobs run as an unprivileged uid, so the interpreter must not live in a "
                "private directory such as /root: use bubblewrap or a system-wide Python)"
                if root else "")
        before = f"{bwrap_problem}; " if mode == "auto" else ""
        return IsolationStatus(mode, "unavailable", False, f"{before}rlimits: {failure}{hint}",
                               tools, root)
    return IsolationStatus(mode, "rlimits", True, bwrap_problem, tools, root, cgroups, denied)


def _find_tools(python: str, bwrap: str | None) -> tuple[Tools, str]:
    """Locate util-linux, procps and the interpreter's directories; a problem if missing."""
    prlimit, setpriv = shutil.which("prlimit"), shutil.which("setpriv")
    empty = Tools(python=python, prlimit=prlimit or "", setpriv=setpriv or "",
                  kill=shutil.which("kill"), bwrap=None, prefixes=())
    if not prlimit or not setpriv:
        return empty, ("prlimit and setpriv (util-linux) are needed to apply limits: "
                       "install util-linux")
    try:
        found = subprocess.run([python, "-I", "-c", _PREFIX_CODE], capture_output=True,
                               text=True, timeout=_PROBE_TIMEOUT_S, env={"PATH": "/usr/bin:/bin"},
                               check=True)
        prefixes: list[str] = json.loads(found.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as err:
        return empty, f"the job interpreter {python} does not run: {err}"
    prefixes.append(str(Path(os.path.realpath(python)).parent.parent))
    real = tuple(sorted({os.path.realpath(p) for p in prefixes}, key=len))
    tools = Tools(python=python, prlimit=prlimit, setpriv=setpriv, kill=empty.kill,
                  bwrap=bwrap or shutil.which("bwrap"), prefixes=real,
                  masked=worker_hooks(real))
    return tools, ""


def worker_hooks(prefixes: tuple[str, ...], distribution: str = "assay") -> tuple[str, ...]:
    """The ``.pth`` files of Assay's own installation that lie under ``prefixes``.

    An editable install of the worker (``pip install -e``, ``uv sync``) puts a ``.pth`` file
    in site-packages whose import hook every interpreter of that environment runs at start
    (``make bench`` section 2: a sandboxed ``pass`` 23 ms over bare Python with it, 14 ms
    without), for a hook that points at the worker's source, which a job
    under bwrap cannot see anyway. Those files are shown to jobs empty. A job's own packages,
    and the ``.pth`` files of any other distribution, are untouched.
    """
    found: set[str] = set()
    # Every record of the name: a build's metadata in the working directory can shadow the
    # installed one for ``distribution()``.
    for dist in importlib.metadata.distributions(name=distribution):
        for file in dist.files or ():
            if file.suffix != ".pth":
                continue
            path: str = os.path.realpath(str(dist.locate_file(file)))
            if os.path.isfile(path) and any(Path(path).is_relative_to(p) for p in prefixes):
                found.add(path)
    return tuple(sorted(found))


def _bwrap_problem(tools: Tools, asked: str | None) -> tuple[str, bool]:
    """Empty if bubblewrap can run a job here, else what went wrong; user namespaces denied."""
    if tools.bwrap is None or not os.access(tools.bwrap, os.X_OK):
        return f"bubblewrap not found ({asked or 'bwrap not on PATH'})", False
    failure, denied = _probe("bwrap", tools)
    if failure:
        return f"bubblewrap at {tools.bwrap} cannot create a sandbox here: {failure}", False
    return "", denied


def _probe(mode: Literal["bwrap", "rlimits"], tools: Tools) -> tuple[str, bool]:
    """Run a probe job exactly as a job would run.

    Returns:
        What failed (empty if nothing), and whether the job was refused a user namespace.
    """
    limits = Limits.for_job(Resources(memory_mb=1024, timeout_s=_PROBE_TIMEOUT_S),
                            max_memory_mb=1024, max_timeout_s=_PROBE_TIMEOUT_S, processes=64,
                            open_files=256, file_size_mb=16)
    with (uid_pool.lease() as uid, tempfile.TemporaryDirectory(prefix="assay-probe-") as tmp,
          filter_fd() as seccomp):
        workspace = Path(tmp)
        (workspace / ".assay" / "tmp").mkdir(parents=True)
        if uid is not None:
            for path in (workspace, workspace / ".assay" / "tmp"):
                os.chown(path, uid, uid)
        argv, tmpdir = build_argv(mode, tools, workspace=workspace, uid=uid, limits=limits,
                                  job=[tools.python, "-c", _USERNS_CODE], seccomp_fd=seccomp)
        try:
            done = subprocess.run(argv, cwd=workspace, capture_output=True, text=True,
                                  timeout=_PROBE_TIMEOUT_S, check=False,
                                  env={"PATH": "/usr/bin:/bin", "TMPDIR": tmpdir},
                                  pass_fds=() if seccomp is None else (seccomp,))
        except (OSError, subprocess.SubprocessError) as err:
            return str(err), False
    if done.returncode == 0:
        return "", done.stdout.split() == ["userns", "False"]
    who = f"uid {uid}" if uid is not None else "the worker's user"
    return (f"a probe job (`{tools.python} -c ...`) failed for {who} with exit status "
            f"{done.returncode}: {done.stderr.strip()[-500:] or 'no output'}"), False


def require(mode: str, *, python: str, bwrap: str | None = None) -> IsolationStatus:
    """The status for ``mode``, or an error that says what is missing and how to fix it.

    Raises:
        SandboxUnavailableError: no isolation mode can run jobs as requested.
    """
    status = isolation_status(mode, python=python, bwrap=bwrap)
    if not status.ok:
        raise SandboxUnavailableError(status.summary)
    return status
