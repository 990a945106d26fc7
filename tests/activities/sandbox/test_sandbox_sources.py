"""Inputs come only from the artifact store, dependency artifacts only from the work directory.

Any Temporal client can start ``execute_job``; these are the requests such a client could
send to make the (root) worker read a file it must not: each is refused for good, naming the
input but never the hash of the foreign file.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.artifacts.store import LocalArtifactStore
from activities.sandbox.job import Sandbox
from workflows.contracts.execution import DependencyArtifact, ExecuteJobInput
from workflows.contracts.plan import InputFile, JobSpec

RUN = "run-1"
SECRET = b"root:only:do-not-leak\n"
SECRET_SHA = hashlib.sha256(SECRET).hexdigest()
LEAK = "import pathlib\nfor p in pathlib.Path('.').rglob('*'):\n    print(p, p.read_bytes())\n"


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "store")


@pytest.fixture
def sandbox(work_dir: Path, store: LocalArtifactStore) -> Sandbox:
    return Sandbox(work_dir=work_dir, store=store)


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A root-only file outside the store and the work directory."""
    path = tmp_path / "private" / "secret.txt"
    path.parent.mkdir()
    path.write_bytes(SECRET)
    path.chmod(0o600)
    return path


def request(*, inputs: list[InputFile] | None = None,
            deps: list[DependencyArtifact] | None = None) -> ExecuteJobInput:
    job = JobSpec(code=LEAK, source=LEAK, filename="job.py")
    return ExecuteJobInput(run_id=RUN, task_id="t1", job=job, inputs=inputs or [],
                           dependency_artifacts=deps or [])


async def refused(sandbox: Sandbox, req: ExecuteJobInput) -> ApplicationError:
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(sandbox.execute_job, req)
    error = caught.value
    assert error.non_retryable
    assert SECRET_SHA not in error.message and SECRET.decode().strip() not in error.message
    return error


def copied_anywhere(work_dir: Path) -> list[Path]:
    """Regular files (not links) below ``work_dir`` holding the secret."""
    found: list[Path] = []
    for root, _, files in os.walk(work_dir):
        paths = [Path(root, name) for name in files]
        found += [p for p in paths if not p.is_symlink() and p.read_bytes() == SECRET]
    return found


@pytest.mark.parametrize("pinned", [SECRET_SHA, "0" * 64], ids=["real-sha", "wrong-sha"])
async def test_an_input_path_to_a_root_only_file_is_never_read(
        sandbox: Sandbox, work_dir: Path, secret: Path, pinned: str) -> None:
    item = InputFile(name="secret.txt", path=str(secret), sha256=pinned, size=len(SECRET))
    error = await refused(sandbox, request(inputs=[item]))
    assert error.type == "InputChanged"
    assert "input 'secret.txt' is not in the artifact store" in error.message
    assert "assay run" in error.message
    assert copied_anywhere(work_dir) == []


@pytest.mark.parametrize("planted", ["file", "directory"])
async def test_a_link_in_the_store_pointing_out_is_refused(
        sandbox: Sandbox, store: LocalArtifactStore, work_dir: Path, secret: Path,
        planted: str) -> None:
    shelf = store.root / "sha256" / SECRET_SHA[:2]
    if planted == "file":
        shelf.mkdir(parents=True)
        (shelf / SECRET_SHA).symlink_to(secret)
    else:
        (secret.parent / SECRET_SHA).symlink_to(secret)
        shelf.parent.mkdir(parents=True)
        shelf.symlink_to(secret.parent)
    item = InputFile(name="data.csv", path=str(shelf / SECRET_SHA), sha256=SECRET_SHA,
                     size=len(SECRET))
    error = await refused(sandbox, request(inputs=[item]))
    assert error.type == "InvalidJob"
    assert "input 'data.csv': its entry in the artifact store is a link" in error.message
    assert copied_anywhere(work_dir) == []


async def test_a_dotdot_path_out_of_the_store_is_not_followed(
        sandbox: Sandbox, store: LocalArtifactStore, work_dir: Path, secret: Path) -> None:
    escape = f"{store.root}/sha256/../../private/secret.txt"
    item = InputFile(name="data.csv", path=escape, sha256=SECRET_SHA, size=len(SECRET))
    error = await refused(sandbox, request(inputs=[item]))
    assert error.type == "InputChanged" and "input 'data.csv'" in error.message
    assert copied_anywhere(work_dir) == []


@pytest.mark.parametrize("digest", ["../../private/secret.txt", SECRET_SHA.upper(), "0" * 63])
async def test_an_input_named_by_anything_but_a_digest_is_refused_up_front(
        sandbox: Sandbox, work_dir: Path, secret: Path, digest: str) -> None:
    item = InputFile(name="data.csv", path=str(secret), sha256=digest, size=1)
    error = await refused(sandbox, request(inputs=[item]))
    assert error.type == "InvalidJob" and "input 'data.csv'" in error.message
    assert "sha256" in error.message
    assert not (work_dir / RUN).exists()


def dependency(work_dir: Path, path: str) -> DependencyArtifact:
    return DependencyArtifact(task_id="prep", name="table.csv", path=path, sha256=SECRET_SHA)


@pytest.mark.parametrize("how", ["absolute", "dotdot", "link", "linked-directory"])
async def test_a_dependency_artifact_is_never_read_from_its_recorded_path(
        sandbox: Sandbox, work_dir: Path, secret: Path, how: str) -> None:
    attempt = work_dir / RUN / "prep" / "attempt-1"
    path = {"absolute": str(secret),
            "dotdot": f"{attempt}/{os.path.relpath(secret, attempt)}",
            "link": str(attempt / "table.csv"),
            "linked-directory": str(work_dir / RUN / "elsewhere" / secret.name)}[how]
    attempt.mkdir(parents=True)
    (attempt / "table.csv").symlink_to(secret)
    (work_dir / RUN / "elsewhere").symlink_to(secret.parent)
    error = await refused(sandbox, request(deps=[dependency(work_dir, path)]))
    assert error.type == "InputChanged"
    assert "artifact 'table.csv' of dependency prep is not in the artifact store" in error.message
    assert copied_anywhere(work_dir) == []


async def test_a_changed_dependency_artifact_is_named_without_its_new_hash(
        sandbox: Sandbox, work_dir: Path) -> None:
    table = work_dir / RUN / "prep" / "attempt-1" / "table.csv"
    table.parent.mkdir(parents=True)
    table.write_bytes(SECRET)
    pinned = hashlib.sha256(b"what the dependency wrote").hexdigest()
    dep = DependencyArtifact(task_id="prep", name="table.csv", path=str(table), sha256=pinned)
    error = await refused(sandbox, request(deps=[dep]))
    assert error.type == "InputChanged"
    assert "artifact 'table.csv' of dependency prep" in error.message
    assert "Re-run the dependency task" in error.message


async def test_a_damaged_store_entry_is_named_without_its_hash(
        sandbox: Sandbox, store: LocalArtifactStore, tmp_path: Path) -> None:
    source = tmp_path / "data.csv"
    source.write_bytes(b"a,b\n1,2\n")
    digest = store.put(source).sha256
    entry = store.root / "sha256" / digest[:2] / digest
    entry.chmod(0o644)
    entry.write_bytes(SECRET)
    item = InputFile(name="data.csv", path=str(source), sha256=digest, size=8)
    error = await refused(sandbox, request(inputs=[item]))
    assert error.type == "InputChanged" and "input 'data.csv'" in error.message
    assert "damaged" in error.message


async def test_a_sandbox_without_a_store_takes_no_inputs(work_dir: Path, secret: Path) -> None:
    item = InputFile(name="data.csv", path=str(secret), sha256=SECRET_SHA, size=len(SECRET))
    error = await refused(Sandbox(work_dir=work_dir), request(inputs=[item]))
    assert error.type == "SandboxUnavailable" and "no artifact store" in error.message
