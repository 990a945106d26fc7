"""A job runs in its provisioned environment inside the sandbox, still with no network."""

from __future__ import annotations

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.environments import Environments
from activities.sandbox.job import Sandbox, isolation_status
from tests.support.isolation import lacking
from workflows.contracts.environments import PreparedEnvironment
from workflows.contracts.errors import ErrorType
from workflows.contracts.execution import ExecuteJobInput
from workflows.contracts.plan import JobSpec, Resources

JOB = """
import socket, sys
import alpha, beta
print(alpha.VALUE, beta.VALUE, sys.prefix)
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    print("network: reachable")
except OSError as err:
    print("network: unreachable", err.errno)
"""


def request(prepared: PreparedEnvironment | None) -> ExecuteJobInput:
    job = JobSpec(code=JOB, source=JOB, filename="job.py", requirements=["alpha"],
                  resources=Resources(memory_mb=256, timeout_s=30))
    return ExecuteJobInput(run_id="run-env", task_id="t1", job=job, environment=prepared)


async def test_a_job_imports_its_environment_s_packages_with_no_network(
        environments: Environments) -> None:
    status = isolation_status("bwrap")
    if not status.ok:
        lacking(f"bubblewrap does not work here: {status.detail}")
    prepared = await environments.prepare(None, ["alpha"])
    sandbox = Sandbox(work_dir=environments.root.parent / "work", isolation="bwrap",
                      environments=environments)
    outcome = await ActivityEnvironment().run(sandbox.execute_job, request(prepared))
    assert outcome.outcome == "succeeded", outcome.stderr_tail
    lines = outcome.stdout_tail.splitlines()
    assert lines[0] == f"alpha 1.0 beta 2.0 {environments.root / prepared.digest}"
    assert lines[1].startswith("network: unreachable")
    assert outcome.environment == prepared.label()


async def test_without_its_environment_the_same_job_cannot_import_them(
        environments: Environments) -> None:
    sandbox = Sandbox(work_dir=environments.root.parent / "work", environments=environments)
    outcome = await ActivityEnvironment().run(sandbox.execute_job, request(None))
    assert outcome.outcome != "succeeded" and "No module named 'alpha'" in outcome.stderr_tail


async def test_a_host_without_the_environment_provisions_it_before_the_job_runs(
        environments: Environments) -> None:
    prepared = await environments.prepare(None, ["alpha"])
    elsewhere = Environments(environments.root.parent / "elsewhere",
                             sources=environments.sources)
    sandbox = Sandbox(work_dir=environments.root.parent / "work", environments=elsewhere,
                      heartbeat_every_s=0.01)
    beats: list[object] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.extend(details)
    outcome = await env.run(sandbox.execute_job, request(prepared))
    assert outcome.outcome == "succeeded", outcome.stderr_tail
    assert elsewhere.installs == 1 and elsewhere.installed(prepared.digest) is not None
    assert {"phase": "environment", "environment": prepared.label()} in beats


async def test_a_worker_without_environments_refuses_a_provisioned_job(
        environments: Environments) -> None:
    prepared = await environments.prepare(None, ["alpha"])
    sandbox = Sandbox(work_dir=environments.root.parent / "work")
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(sandbox.execute_job, request(prepared))
    assert caught.value.type == ErrorType.SANDBOX_UNAVAILABLE and caught.value.non_retryable
