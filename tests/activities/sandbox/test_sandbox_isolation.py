"""What isolation the sandbox reports, and what rlimits-only mode does and does not stop."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.common.trees import remove_tree
from activities.sandbox.isolation import SandboxUnavailableError
from activities.sandbox.job import Sandbox, isolation_status
from activities.sandbox.workspace import unreachable_parent
from tests.support.isolation import as_root, lacking
from tests.support.waiting import wait_for
from workflows.contracts.execution import ExecuteJobInput, ExecutionOutcome
from workflows.contracts.plan import JobSpec, Resources

SYSTEM_PYTHON = "/usr/bin/python3"
NO_BWRAP = "/nonexistent/bwrap"


def rlimits_sandbox(work_dir: Path, max_processes: int = 256) -> Sandbox:
    """An rlimits-only sandbox with an interpreter every uid can run, or skip."""
    if not Path(SYSTEM_PYTHON).exists():
        lacking(f"{SYSTEM_PYTHON} is needed for rlimits tests as root")
    status = isolation_status("rlimits", python=SYSTEM_PYTHON)
    if not status.ok:
        lacking(status.summary)
    return Sandbox(work_dir=work_dir, isolation="rlimits", python=SYSTEM_PYTHON,
                   max_processes=max_processes)


async def run(sandbox: Sandbox, code: str, task: str = "t1") -> ExecutionOutcome:
    job = JobSpec(code=code, source=code, filename="job.py",
                  resources=Resources(memory_mb=256, timeout_s=5))
    req = ExecuteJobInput(run_id="run-1", task_id=task, job=job)
    return await ActivityEnvironment().run(sandbox.execute_job, req)


def test_auto_uses_bubblewrap_when_it_works_here() -> None:
    if not isolation_status("bwrap").ok:
        lacking(f"bubblewrap does not work here: {isolation_status('bwrap').detail}")
    status = isolation_status("auto")
    assert status.ok and status.mode == "bwrap"
    assert status.network_isolated and status.pid_namespace
    assert status.dedicated_uid == (os.geteuid() == 0)
    assert "no network" in status.summary


def test_bwrap_mode_without_bubblewrap_is_a_clear_error(work_dir: Path) -> None:
    with pytest.raises(SandboxUnavailableError) as caught:
        Sandbox(work_dir=work_dir, isolation="bwrap", bwrap=NO_BWRAP)
    assert f"bubblewrap not found ({NO_BWRAP})" in str(caught.value)
    assert "ASSAY_SANDBOX_ISOLATION=rlimits" in str(caught.value)


def test_auto_without_bubblewrap_falls_back_to_rlimits_and_says_what_is_lost() -> None:
    status = isolation_status("auto", python=SYSTEM_PYTHON, bwrap=NO_BWRAP)
    assert status.ok and status.mode == "rlimits"
    assert not status.network_isolated and not status.pid_namespace
    assert "network NOT isolated" in status.summary and "bubblewrap not found" in status.summary


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="not one of auto, bwrap, rlimits"):
        isolation_status("docker")


@as_root
def test_rlimits_refuses_an_interpreter_in_a_private_directory() -> None:
    private = unreachable_parent(Path(os.path.realpath(sys.executable)))
    if private is None:
        pytest.skip("this interpreter is reachable by every user")
    status = isolation_status("rlimits", python=sys.executable)
    assert not status.ok and status.mode == "unavailable"
    assert "private directory" in status.detail and "Permission denied" in status.detail


async def test_rlimits_mode_does_not_isolate_the_network(work_dir: Path) -> None:
    sandbox = rlimits_sandbox(work_dir)
    assert not sandbox.status.network_isolated
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        outcome = await run(sandbox, code)
        listener.settimeout(2)
        accepted, _ = listener.accept()  # the job really got through
        accepted.close()
    assert outcome.outcome == "succeeded"


@as_root
@pytest.mark.parametrize("target", ["../x", "/usr/x", "/etc/assay_probe"])
async def test_rlimits_mode_blocks_writes_outside_by_file_permissions(
        work_dir: Path, target: str) -> None:
    sandbox = rlimits_sandbox(work_dir)
    host = work_dir / "run-1" / "t1" / "x" if target == "../x" else Path(target)
    try:
        outcome = await run(sandbox, f"open({target!r}, 'w').write('escaped')")
        assert not host.exists()
    finally:
        host.unlink(missing_ok=True)
    assert outcome.outcome == "sandbox_violation" and "Permission denied" in outcome.reason


@as_root
async def test_rlimits_mode_contains_a_fork_bomb_and_stray_processes(work_dir: Path) -> None:
    sandbox = rlimits_sandbox(work_dir, max_processes=32)
    stray = "import subprocess\nsubprocess.Popen(['setsid', 'sleep', '97.25'])\n"
    outcome = await run(sandbox, stray, task="stray")
    assert outcome.outcome == "succeeded"
    outcome = await run(sandbox, "import os\nwhile True:\n    os.fork()\n")
    assert outcome.outcome == "sandbox_violation" and "limit of 32 processes" in outcome.reason
    uid = int(outcome.isolation.split(" as uid ")[1].split(";")[0])

    def leftovers() -> list[psutil.Process]:
        # Killed orphans stay zombies until the machine's init reaps them: wait for that.
        return [p for p in psutil.process_iter(["uids", "cmdline"])
                if p.info["uids"].real == uid or "97.25" in (p.info["cmdline"] or [])]

    await wait_for(lambda: not leftovers(), timeout=5, what="the killed processes to be reaped")


@as_root
async def test_rlimits_mode_needs_a_reachable_work_dir(tmp_path: Path) -> None:
    if unreachable_parent(tmp_path) is None:
        pytest.skip("pytest's temporary directory is reachable by every user here")
    sandbox = rlimits_sandbox(tmp_path / "work")
    with pytest.raises(ApplicationError) as caught:
        await run(sandbox, "pass")
    assert caught.value.type == "SandboxUnavailable" and caught.value.non_retryable
    assert "chmod o+x" in caught.value.message


async def test_an_interpreter_under_tmp_runs_jobs_whose_work_dir_is_elsewhere() -> None:
    """A job's /tmp is its own scratch, but never over the interpreter it runs with.

    A virtual environment under /tmp (a clone made there) ran every job as status 127 once
    the work directory moved out of /tmp: the scratch mounted over /tmp hid the interpreter.
    """
    if not shutil.which("bwrap"):
        lacking("bubblewrap is not installed")
    venv = Path(tempfile.mkdtemp(prefix="assay-venv-test-", dir="/tmp"))
    work = Path(tempfile.mkdtemp(prefix="assay-work-test-", dir="/var/tmp"))
    try:
        for path in (venv, work):
            path.chmod(0o755)
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv / "env")],
                       check=True)
        sandbox = Sandbox(work_dir=work, isolation="bwrap", python=str(venv / "env/bin/python"))
        outcome = await run(sandbox, "import os, sys, tempfile\n"
                                     "open('out.txt', 'w').write(sys.prefix)\n"
                                     "tempfile.NamedTemporaryFile().close()\n")
        assert outcome.outcome == "succeeded", outcome.reason
        assert outcome.exit_code == 0
    finally:
        remove_tree(venv)
        remove_tree(work)


async def test_a_job_starts_without_the_workers_own_import_hook(work_dir: Path) -> None:
    """An editable install's ``.pth`` hook points at the worker's source; jobs see it empty.

    The same interpreter outside the sandbox runs the hook (so the check can fail), while a
    job still imports the environment's packages.
    """
    status = isolation_status("bwrap")
    if not status.ok:
        lacking(f"bubblewrap does not work here: {status.detail}")
    if not status.tools.masked:  # not a want of isolation: nothing to hide
        pytest.skip("this worker is not an editable install: it has no import hook to hide")
    probe = "import sys; print(sorted(m for m in sys.modules if m.startswith('__editable__')))"
    outside = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             check=True)
    assert outside.stdout.strip() != "[]"
    sandbox = Sandbox(work_dir=work_dir, isolation="bwrap")
    outcome = await run(sandbox, f"import psutil\n{probe}\n")
    assert outcome.outcome == "succeeded", outcome.reason
    assert outcome.stdout_tail.strip() == "[]"
