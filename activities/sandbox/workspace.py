"""A job's working directory: laying it out before the run, and reading it back afterwards.

Layout of ``work_dir/<run_id>/<task_id>/attempt-<n>-<execution>/`` (see
:mod:`activities.sandbox.job`; ``<execution>`` is a short form of the task workflow's run id,
so a run reset with ``temporal workflow reset`` runs its jobs in directories of its own)::

    <filename>            the job's source (read-only)
    <input names>         verified copies of the inputs, from the artifact store (read-only)
    deps/<task>/<name>    verified copies of dependency artifacts (read-only)
    .assay/args.json      the job's arguments (``ASSAY_JOB_ARGS``)
    .assay/tmp/           TMPDIR (also /tmp and /dev/shm under bwrap); removed after the run
    .assay/home/          HOME, so caches do not pose as artifacts
    anything else         the job's artifacts

Every name that comes from a request is checked before anything touches the disk, so a name
like ``../../etc/x`` is refused instead of followed; where the copied files come from is
:mod:`activities.sandbox.sources`' concern.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from temporalio import activity

from activities.common.trees import remove_tree, walk
from activities.sandbox.sources import DEPS, Sources, invalid_job
from client.runs import short_execution
from workflows.common.validation import path_component
from workflows.contracts.arguments import check_job_args
from workflows.contracts.execution import ExecuteJobInput

CONTROL = ".assay"
RESERVED = frozenset({CONTROL, DEPS})


def _component(value: str, what: str) -> str:
    try:
        return path_component(value, what)
    except ValueError as err:
        raise invalid_job(str(err)) from None


def _relative(value: str, what: str) -> str:
    parts = value.split("/")
    if value.startswith("/") or any(p in ("", ".", "..") or "\0" in p for p in parts):
        raise invalid_job(f"{what} {value!r} must be a relative path inside the working "
                          "directory (no leading '/', no '..' or empty parts)")
    if parts[0] in RESERVED:
        raise invalid_job(f"{what} {value!r} may not start with {parts[0]!r}: that name is "
                          "reserved by the sandbox")
    return value


@dataclass(frozen=True)
class Layout:
    """Where everything of one attempt lives; built only from validated names."""

    path: Path
    filename: str
    inputs: tuple[str, ...]

    @property
    def control(self) -> Path:
        """The sandbox's own directory inside the workspace (never an artifact)."""
        return self.path / CONTROL

    @property
    def tmp(self) -> Path:
        """The job's TMPDIR on the host."""
        return self.control / "tmp"

    @property
    def home(self) -> Path:
        """The job's HOME."""
        return self.control / "home"

    @property
    def args_file(self) -> Path:
        """The job's arguments as JSON."""
        return self.control / "args.json"


def task_execution() -> str:
    """The run id of the task workflow the running activity serves (none outside one)."""
    return activity.info().workflow_run_id or "" if activity.in_activity() else ""


def plan_layout(work_dir: Path, req: ExecuteJobInput, execution: str = "") -> Layout:
    """Validate every name in ``req`` and say where the attempt's directory goes.

    ``execution`` is the run id of the task workflow's execution asking (none: the directory
    is ``attempt-<n>``, as when a job is run outside Temporal).
    """
    job = req.job
    if job.source is None or job.filename is None:
        raise invalid_job(f"task {req.task_id}: the job has no resolved source; submit the "
                          "plan through `assay run` so the job's code is embedded in it")
    if req.attempt < 1:
        raise invalid_job(f"task {req.task_id}: attempt must be >= 1, got {req.attempt}")
    try:
        check_job_args(job.args)  # any client may send a job: E2BIG must not wait for exec
    except ValueError as err:
        raise invalid_job(f"task {req.task_id}: {err}") from None
    filename = _component(job.filename, "job filename")
    if filename in RESERVED or filename.startswith("."):
        raise invalid_job(f"job filename {filename!r} is reserved or hidden; use e.g. job.py")
    names = [_relative(item.name, "input name") for item in req.inputs]
    taken = {filename}
    parents = {str(Path(n).parent) for n in names} | {filename}
    for name in names:
        if name in taken or name in parents:
            raise invalid_job(f"input name {name!r} clashes with another input or the job file")
        taken.add(name)
    for dep in req.dependency_artifacts:
        _component(dep.task_id, "dependency task id")
        _relative(dep.name, f"artifact name of dependency {dep.task_id}")
    attempt = f"attempt-{req.attempt}"
    if execution:
        attempt += "-" + _component(short_execution(execution), "execution")
    path = (work_dir / _component(req.run_id, "run id") / _component(req.task_id, "task id")
            / attempt)
    return Layout(path=path, filename=filename, inputs=tuple(names))


def prepare(layout: Layout, req: ExecuteJobInput, uid: int | None, sources: Sources) -> None:
    """Create a fresh working directory for one attempt (wiping a half-done earlier one).

    Inputs and dependency artifacts are copied in from where ``sources`` takes them.
    """
    for parent in (layout.path.parent.parent, layout.path.parent):
        parent.mkdir(parents=True, exist_ok=True)
        parent.chmod(0o711)  # searchable by the job's uid, but not listable
    if layout.path.exists() or layout.path.is_symlink():
        remove_tree(layout.path)
    layout.path.mkdir(mode=0o700)
    for directory in (layout.control, layout.tmp, layout.home):
        directory.mkdir(mode=0o755 if directory == layout.control else 0o700)
    _write_read_only(layout.path / layout.filename, (req.job.source or "").encode())
    _write_read_only(layout.args_file, json.dumps(req.job.args, indent=2).encode())
    sources.copy_into(layout.path, req)
    if uid is not None:
        for path in (layout.path, layout.tmp, layout.home):
            os.chown(path, uid, uid)


def _write_read_only(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o444)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def unreachable_parent(path: Path) -> Path | None:
    """The first directory on the way to ``path`` that other users cannot search, if any."""
    for parent in [*reversed(path.parents), path]:
        if parent.exists() and not parent.stat().st_mode & stat.S_IXOTH:
            return parent
    return None


def hand_back(layout: Layout, uid: int | None, max_entries: int = 1_000_000) -> None:
    """After the run: give every file back to the worker's user and drop the scratch space.

    Taking ownership back means a later job that happens to get the same uid cannot touch
    this attempt's artifacts.

    Raises:
        TreeLimitError: the job left a tree deeper or larger than a walk reads.
    """
    if uid is not None:
        owner, group = os.geteuid(), os.getegid()
        if os.lstat(layout.path).st_uid == uid:
            os.lchown(layout.path, owner, group)
        for found in walk(layout.path, max_entries=max_entries):
            # Only what the job owns: a hard link to someone else's file must not
            # hand that file to the worker's user.
            if found.entry.stat(follow_symlinks=False).st_uid == uid:
                os.lchown(found.entry.path, owner, group)
    for scratch in (layout.tmp, layout.home):
        remove_tree(scratch)
