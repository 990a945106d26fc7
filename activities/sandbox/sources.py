"""Where a job's inputs and dependency artifacts come from: Assay's own storage, nothing else.

Any Temporal client can ask the sandbox to run a job, so nothing in a request may choose what
the worker (often root) reads. ``InputFile.path`` and ``DependencyArtifact.path`` stay in the
payload (saved histories carry them) but are never trusted:

- an **input** is taken from the artifact store (:mod:`activities.artifacts`) by the sha256
  pinned when the plan was submitted; its ``path`` is not opened at all;
- a **dependency artifact** is taken only from below this worker's work directory, walking
  down to it without following a link (``..``, a link planted by a job, a path elsewhere are
  refused).

Each file is hashed while it is copied and must match its pin. An error names the input and
says how to fix it, but never the digest of what was found: that would tell a caller the hash
of a file it may not read.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from temporalio.exceptions import ApplicationError

from activities.artifacts.store import (
    ArtifactStore,
    NotStoredError,
    UnsafeEntryError,
    is_sha256,
    open_beneath,
    parts_below,
)
from activities.common.digests import drain
from workflows.common.errors import ErrorType
from workflows.contracts.execution import DependencyArtifact, ExecuteJobInput
from workflows.contracts.plan import InputFile

DEPS = "deps"
_RESUBMIT = "Re-submit the plan with `assay run`, which stores its inputs"
_RERUN = "Re-run the dependency task"


def invalid_job(message: str) -> ApplicationError:
    """A permanent error: the request itself is wrong and a retry cannot help."""
    return ApplicationError(message, type=ErrorType.INVALID_JOB, non_retryable=True)


def _unavailable(message: str) -> ApplicationError:
    """A permanent error: the input exists nowhere this worker may read it."""
    return ApplicationError(message, type=ErrorType.INPUT_CHANGED, non_retryable=True)


class Sources:
    """Opens a request's inputs and dependency artifacts where Assay keeps them.

    Args:
        work_dir: this worker's work directory (resolved); dependency artifacts lie below it.
        store: the artifact store inputs are taken from; without one, inputs are refused.
    """

    def __init__(self, work_dir: Path, store: ArtifactStore | None) -> None:
        self._work_dir = work_dir
        self._store = store

    def check(self, req: ExecuteJobInput) -> None:
        """Refuse, before anything touches the disk, references that can never be valid."""
        for item in req.inputs:
            if not is_sha256(item.sha256):
                raise invalid_job(f"input {item.name!r}: its sha256 is not 64 lowercase hex "
                                  f"digits; inputs are named by their digest. {_RESUBMIT}.")
        for dep in req.dependency_artifacts:
            self._dependency_parts(dep)

    def copy_into(self, workspace: Path, req: ExecuteJobInput) -> None:
        """Copy every input and dependency artifact into ``workspace``, read-only, verified."""
        for item in req.inputs:
            what = f"input {item.name!r}"
            with self._input(item, what) as source:
                if not _copy_verified(source, workspace / item.name, item.sha256):
                    raise _unavailable(f"{what}: its copy in the artifact store is damaged (it "
                                       f"no longer matches the pinned sha256). {_RESUBMIT}.")
        for dep in req.dependency_artifacts:
            what = f"artifact {dep.name!r} of dependency {dep.task_id}"
            with self._dependency(dep, what) as source:
                if not _copy_verified(source, workspace / DEPS / dep.task_id / dep.name,
                                      dep.sha256):
                    raise _unavailable(f"{what} at {dep.path} has changed since the dependency "
                                       f"ended (it no longer matches its sha256). {_RERUN}.")

    @contextmanager
    def _input(self, item: InputFile, what: str) -> Generator[BinaryIO]:
        if self._store is None:
            raise ApplicationError(
                f"{what}: this sandbox worker has no artifact store, so it takes no inputs; "
                "run it with `assay worker --pool assay-sandbox` or `assay up`",
                type=ErrorType.SANDBOX_UNAVAILABLE, non_retryable=True)
        try:
            source = self._store.open(item.sha256)
        except NotStoredError as err:
            raise _unavailable(
                f"{what} is not in the artifact store: inputs are taken only from there, by "
                f"the sha256 pinned when the plan was submitted (never from a path). "
                f"{_RESUBMIT}, on a machine that shares this store") from err
        except UnsafeEntryError as err:
            # err names the entry, i.e. a digest: not repeated
            raise invalid_job(f"{what}: its entry in the artifact store is a link, or not a "
                              f"regular file, or the digest is malformed; refused. "
                              f"{_RESUBMIT}.") from err
        except OSError as err:
            raise ApplicationError(
                f"{what} cannot be read from the artifact store ({err.strerror}); give the "
                "sandbox worker's user read access to the store",
                type=ErrorType.SANDBOX_UNAVAILABLE, non_retryable=True) from err
        with source:
            yield source

    @contextmanager
    def _dependency(self, dep: DependencyArtifact, what: str) -> Generator[BinaryIO]:
        try:
            fd = open_beneath(self._work_dir, self._dependency_parts(dep))
        except NotStoredError as err:
            raise _unavailable(f"{what} is gone from {dep.path}. {_RERUN}.") from err
        except UnsafeEntryError as err:
            raise invalid_job(f"{what} at {dep.path} is refused ({err}): dependency artifacts "
                              "are regular files reached without links") from err
        except OSError as err:
            raise _unavailable(f"{what} cannot be read at {dep.path} ({err.strerror}). "
                               f"{_RERUN}.") from err
        with os.fdopen(fd, "rb") as source:
            yield source

    def _dependency_parts(self, dep: DependencyArtifact) -> list[str]:
        """The path's parts below the work directory, or ``InvalidJob`` if it leaves it."""
        parts = parts_below(self._work_dir, dep.path)
        if parts is None:
            raise invalid_job(
                f"artifact {dep.name!r} of dependency {dep.task_id} is recorded at {dep.path}, "
                f"outside this worker's work directory {self._work_dir}: dependency artifacts "
                f"are taken only from there (no '..', no empty parts). {_RERUN} on this pool.")
        return parts


def _copy_verified(source: BinaryIO, dest: Path, expected: str) -> bool:
    """Copy ``source`` to a new read-only ``dest``, hashing on the way.

    Returns:
        Whether the copy matches ``expected`` (if not, it is removed).
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o444)
    with os.fdopen(out, "wb") as target:
        _, digest = drain(source, target.write)
    if digest != expected:
        dest.unlink()
        return False
    return True
