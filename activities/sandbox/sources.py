"""Where a job's inputs and dependency artifacts come from: the artifact store, nothing else.

Any Temporal client can ask the sandbox to run a job, so nothing in a request may choose what
the worker (often root) reads. ``InputFile.path`` and ``DependencyArtifact.path`` stay in the
payload (saved histories carry them) but are never opened: an **input** is fetched from the
artifact store (:mod:`activities.artifacts`) by the sha256 pinned when the plan was
submitted, a **dependency artifact** by the sha256 its task's sandbox recorded when it put
the artifact there. So a dependant task may run on another host than its dependency, and
nothing relies on two sandbox workers sharing a disk.

The store checks each file's digest before it lands in the workspace. An error names the
input and says how to fix it, but never the digest of what was found: that would tell a caller
the hash of a file it may not read.
"""

from __future__ import annotations

from pathlib import Path

from temporalio.exceptions import ApplicationError

from activities.artifacts.store import (
    ArtifactStore,
    DamagedEntryError,
    NotStoredError,
    StoreUnavailableError,
    UnsafeEntryError,
    is_sha256,
)
from workflows.contracts.errors import ErrorType
from workflows.contracts.execution import ExecuteJobInput

DEPS = "deps"
_RESUBMIT = "Re-submit the plan with `assay run`, which stores its inputs"
_RERUN = "Re-run the dependency task"


def invalid_job(message: str) -> ApplicationError:
    """A permanent error: the request itself is wrong and a retry cannot help."""
    return ApplicationError(message, type=ErrorType.INVALID_JOB, non_retryable=True)


def _unavailable(message: str) -> ApplicationError:
    """A permanent error: the input exists nowhere this worker may read it."""
    return ApplicationError(message, type=ErrorType.INPUT_CHANGED, non_retryable=True)


def store_unreachable(what: str, err: StoreUnavailableError) -> ApplicationError:
    """A transient error: the store cannot be reached now; the activity is retried."""
    return ApplicationError(f"{what}: {err}", type=ErrorType.STORE_UNAVAILABLE)


class Sources:
    """Fetches a request's inputs and dependency artifacts from the artifact store.

    Args:
        work_dir: this worker's work directory (resolved).
        store: the artifact store; without one, inputs and dependency artifacts are refused.
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
            if not is_sha256(dep.sha256):
                raise invalid_job(f"artifact {dep.name!r} of dependency {dep.task_id}: its "
                                  f"sha256 is not 64 lowercase hex digits. {_RERUN}.")

    def copy_into(self, workspace: Path, req: ExecuteJobInput) -> None:
        """Fetch every input and dependency artifact into ``workspace``, read-only, checked."""
        for item in req.inputs:
            self._fetch(item.sha256, workspace / item.name, f"input {item.name!r}", _RESUBMIT)
        for dep in req.dependency_artifacts:
            self._fetch(dep.sha256, workspace / DEPS / dep.task_id / dep.name,
                        f"artifact {dep.name!r} of dependency {dep.task_id}", _RERUN)

    def _fetch(self, sha256: str, dest: Path, what: str, fix: str) -> None:
        if self._store is None:
            raise ApplicationError(
                f"{what}: this sandbox worker has no artifact store, so it takes no inputs; "
                "run it with `assay worker --pool assay-sandbox` or `assay up`",
                type=ErrorType.SANDBOX_UNAVAILABLE, non_retryable=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._store.fetch(sha256, dest)
        except NotStoredError as err:
            raise _unavailable(
                f"{what} is not in the artifact store: it is taken only from there, by its "
                f"sha256 (never from a path). {fix}, with a store this worker shares") from err
        except DamagedEntryError as err:
            raise _unavailable(f"{what}: its copy in the artifact store is damaged (it no "
                               f"longer matches its sha256). {fix}.") from err
        except UnsafeEntryError as err:
            # err names the entry, i.e. a digest: not repeated
            raise invalid_job(f"{what}: its entry in the artifact store is a link, or not a "
                              f"regular file, or the digest is malformed; refused. "
                              f"{fix}.") from err
        except StoreUnavailableError as err:
            raise store_unreachable(what, err) from err
        except OSError as err:
            raise ApplicationError(
                f"{what} cannot be read from the artifact store ({err.strerror}); give the "
                "sandbox worker's user read access to the store",
                type=ErrorType.SANDBOX_UNAVAILABLE, non_retryable=True) from err
