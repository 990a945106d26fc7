"""Where this machine lets the sandbox make a cgroup per job, or why it cannot.

Measured, not assumed (like :mod:`activities.sandbox.isolation`): the worker's own cgroup is
found from ``/proc/self/mountinfo`` and ``/proc/self/cgroup``, then a probe cgroup is made and
removed there. cgroup v2 is used where its hierarchy offers the memory controller (the worker
enables the controllers for its children, first moving itself into a leaf if it is alone in
its cgroup, as v2 requires); else the v1 ``memory``, ``pids``, ``cpu`` and ``cpuacct``
hierarchies (``cpuacct`` only counts the job's CPU time: v2 counts it in every cgroup). Not
root, no memory controller or a read-only hierarchy: no cgroups, and
:attr:`CgroupSupport.summary` says that only per-process limits hold, and why.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
_OCTAL = re.compile(r"\\([0-7]{3})")
_KEY_FILES = {1: {"memory": "memory.limit_in_bytes", "pids": "pids.max", "cpu": "cpu.cfs_quota_us",
                 "cpuacct": "cpuacct.usage"},
              2: {"memory": "memory.max", "pids": "pids.max", "cpu": "cpu.max"}}


@dataclass(frozen=True)
class CgroupSupport:
    """Where jobs' cgroups go on this machine, or why there are none.

    Attributes:
        version: 1 or 2, or 0 when no cgroup can be made.
        parents: controller -> the worker's own cgroup directory below which job cgroups are
            made (one directory for every controller under v2).
        problem: why no cgroup can be made (when ``version`` is 0).
    """

    version: int
    parents: dict[str, Path] = field(default_factory=dict[str, Path])
    problem: str = ""

    @classmethod
    def unavailable(cls, problem: str) -> CgroupSupport:
        """No per-job cgroups, for the reason given."""
        return cls(0, {}, problem)

    @property
    def available(self) -> bool:
        """Jobs get a cgroup with at least the memory controller."""
        return self.version > 0

    @property
    def summary(self) -> str:
        """Which memory guarantee jobs get, for ``assay check`` and every execution record."""
        if not self.available:
            return ("per-process limits only: a job's processes together may exceed its memory "
                    f"({self.problem})")
        return f"per-job cgroup (v{self.version}: {', '.join(self.parents)})"


@functools.lru_cache(maxsize=4)
def cgroup_support(proc: Path = Path("/proc/self")) -> CgroupSupport:
    """Measure whether job cgroups can be made here (by making and removing one)."""
    try:
        mountinfo = (proc / "mountinfo").read_text()
        membership = (proc / "cgroup").read_text()
    except OSError as err:
        return CgroupSupport.unavailable(f"cannot read {err.filename}: {err.strerror}")
    unified, legacy = find_hierarchies(mountinfo, membership)
    problems: list[str] = []
    if unified is not None:
        problem = _usable_v2(unified)
        if not problem:
            return CgroupSupport(2, {c: unified for c in _v2_controllers(unified)})
        problems.append(problem)
    if "memory" in legacy:
        tried = {c: _try_make(legacy[c], 1, c) for c in CONTROLLERS if c in legacy}
        if not tried["memory"]:
            return CgroupSupport(1, {c: legacy[c] for c, problem in tried.items() if not problem})
        problems.append(tried["memory"])
    if not problems:
        problems.append("no cgroup hierarchy with the memory controller is mounted")
    return CgroupSupport.unavailable("; ".join(problems))


def find_hierarchies(mountinfo: str, membership: str) -> tuple[Path | None, dict[str, Path]]:
    """The worker's own cgroup directory under v2, and per v1 controller.

    Args:
        mountinfo: the text of ``/proc/self/mountinfo`` (where hierarchies are mounted).
        membership: the text of ``/proc/self/cgroup`` (which cgroup the worker is in).
    """
    own: dict[str, str] = {}
    for line in membership.splitlines():
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else ["unified"]:
            own[name] = path
    unified: Path | None = None
    legacy: dict[str, Path] = {}
    for line in mountinfo.splitlines():
        fields = line.split()
        tail = fields[fields.index("-") + 1:]
        root, mount = _unescape(fields[3]), Path(_unescape(fields[4]))
        if tail[0] == "cgroup2" and unified is None and "unified" in own:
            unified = _below(mount, root, own["unified"])
        elif tail[0] == "cgroup":
            for name in set(tail[2].split(",")) & set(CONTROLLERS) & set(own):
                found = _below(mount, root, own[name])
                if found is not None:
                    legacy.setdefault(name, found)
    return unified, legacy


def _unescape(text: str) -> str:
    """Undo mountinfo's octal escapes (a space is written as backslash-040)."""
    return _OCTAL.sub(lambda found: chr(int(found[1], 8)), text)


def _below(mount: Path, root: str, path: str) -> Path | None:
    """Where cgroup ``path`` appears under a mount of the hierarchy's ``root``, if it does."""
    if path != root and not path.startswith(root.rstrip("/") + "/"):
        return None
    return mount / os.path.relpath(path, root) if path != root else mount


def _v2_controllers(parent: Path) -> list[str]:
    offered = read_value(parent / "cgroup.controllers").split()
    return [c for c in CONTROLLERS if c in offered]


def _usable_v2(parent: Path) -> str:
    """Empty if job cgroups with the memory controller can be made below ``parent``."""
    offered = _v2_controllers(parent)
    if "memory" not in offered:
        return f"cgroup v2 at {parent} offers no memory controller"
    enabled = read_value(parent / "cgroup.subtree_control").split()
    for name in (c for c in offered if c not in enabled):
        try:
            write_value(parent / "cgroup.subtree_control", f"+{name}")
        except OSError as err:
            if err.errno != errno.EBUSY or not _leave_for_leaf(parent):
                return (f"cannot enable the {name} controller below {parent}: {err.strerror} "
                        "(run the sandbox worker in a cgroup of its own with delegation, e.g. "
                        "systemd-run -p Delegate=yes, or a container with its own cgroup "
                        "namespace and a writable /sys/fs/cgroup)")
            write_value(parent / "cgroup.subtree_control", f"+{name}")
    return _try_make(parent, 2, "memory")


def _leave_for_leaf(parent: Path) -> bool:
    """Move the worker into a leaf of its own cgroup if it is alone there.

    cgroup v2 lets a cgroup that holds processes hand no controller to its children.
    """
    if read_value(parent / "cgroup.procs").split() != [str(os.getpid())]:
        return False
    leaf = parent / "assay-worker"
    with contextlib.suppress(FileExistsError):
        leaf.mkdir()
    write_value(leaf / "cgroup.procs", str(os.getpid()))
    return True


def _try_make(parent: Path, version: int, controller: str) -> str:
    """Empty if a cgroup with ``controller`` can be created (and removed) below ``parent``."""
    probe = parent / f"assay-probe-{worker_id()}"
    try:
        probe.mkdir()
    except FileExistsError:
        pass
    except OSError as err:
        hint = {errno.EACCES: "; run the sandbox worker as root",
                errno.EPERM: "; run the sandbox worker as root",
                errno.EROFS: "; mount it read-write"}.get(err.errno or 0, "")
        return f"cannot create a cgroup in {parent}: {err.strerror}{hint}"
    key = _KEY_FILES[version][controller]
    found = (probe / key).exists()
    remove_dir(probe)
    return "" if found else f"cgroups in {parent} have no {key} (kernel without that limit)"


def worker_id() -> str:
    """``<pid namespace>-<pid>`` of this worker.

    Unique on the machine, even among containers that share a cgroup hierarchy, so no worker
    mistakes another's cgroups for its own.
    """
    return f"{os.stat('/proc/self/ns/pid').st_ino}-{os.getpid()}"


def remove_dir(path: Path) -> bool:
    """Remove one cgroup directory; ``False`` only while processes still hold it (EBUSY)."""
    try:
        path.rmdir()
    except OSError as err:
        return err.errno != errno.EBUSY
    return True


def read_value(path: Path) -> str:
    """A cgroup file's content, stripped; empty if it cannot be read."""
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def write_value(path: Path, value: str) -> None:
    """Write one value to a cgroup file (one ``write``, as the kernel expects)."""
    with open(path, "w", encoding="ascii") as handle:
        handle.write(value)
