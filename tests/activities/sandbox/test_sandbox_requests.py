"""Requests the sandbox must refuse before running anything: they fail the activity for good."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.sandbox.job import Sandbox
from workflows.contracts.execution import DependencyArtifact, ExecuteJobInput
from workflows.contracts.plan import InputFile, JobSpec

RUN = "run-1"


@pytest.fixture
def sandbox(work_dir: Path) -> Sandbox:
    return Sandbox(work_dir=work_dir)


def request(code: str | None, *, task: str = "t1", inputs: list[InputFile] | None = None,
            deps: list[DependencyArtifact] | None = None) -> ExecuteJobInput:
    job = JobSpec(code=code or "pass", source=code, filename="job.py")
    return ExecuteJobInput(run_id=RUN, task_id=task, job=job, inputs=inputs or [],
                           dependency_artifacts=deps or [])


@pytest.mark.parametrize(("change", "kind", "words"), [
    ({"source": None}, "InvalidJob", "no resolved source"),
    ({"filename": "../evil.py"}, "InvalidJob", "single path component"),
    ({"task": ".."}, "InvalidJob", "task id"),
    ({"args": {"x": "a\x00b"}}, "InvalidJob", "NUL byte"),
    ({"args": {"x": "y" * 200_000}}, "InvalidJob", "in one argument"),
    ({"args": {f"k{i}": "y" * 100_000 for i in range(6)}}, "InvalidJob", "in all"),
])
async def test_bad_requests_fail_permanently(sandbox: Sandbox, change: dict[str, Any],
                                             kind: str, words: str) -> None:
    req = request("pass", task=change.get("task", "t1"))
    req.job.source = change.get("source", req.job.source)
    req.job.filename = change.get("filename", req.job.filename)
    req.job.args = change.get("args", req.job.args)  # as a client may send it, unchecked
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(sandbox.execute_job, req)
    assert caught.value.type == kind and caught.value.non_retryable
    assert words in caught.value.message


@pytest.mark.parametrize(("name", "dep_task", "where"), [
    ("../../etc/passwd", None, "input name"),
    ("deps/x", None, "reserved"),
    ("../x", "prep", "artifact name of dependency prep"),
    ("x", "../prep", "dependency task id"),
])
async def test_path_traversal_in_names_is_refused(
        sandbox: Sandbox, work_dir: Path, name: str, dep_task: str | None, where: str) -> None:
    inputs: list[InputFile] = []
    deps: list[DependencyArtifact] = []
    if dep_task is None:
        inputs.append(InputFile(name=name, path="/etc/hostname", sha256="0" * 64, size=1))
    else:
        deps.append(DependencyArtifact(task_id=dep_task, name=name,
                                       path=str(work_dir / "x"), sha256="0" * 64))
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(sandbox.execute_job,
                                        request("pass", inputs=inputs, deps=deps))
    assert caught.value.type == "InvalidJob" and where in caught.value.message
    assert not (work_dir / RUN).exists()


async def test_a_dependency_artifact_named_by_anything_but_a_digest_is_refused(
        sandbox: Sandbox) -> None:
    dep = DependencyArtifact(task_id="prep", name="shadow", path="/etc/shadow",
                             sha256="/etc/shadow")
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(sandbox.execute_job, request("pass", deps=[dep]))
    assert caught.value.type == "InvalidJob" and "sha256" in caught.value.message

