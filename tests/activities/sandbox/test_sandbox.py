"""The sandbox runs real jobs in real subprocesses and classifies every way they end."""

from __future__ import annotations

import asyncio
import hashlib
import os
import socket
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from temporalio.testing import ActivityEnvironment

from activities.artifacts.store import LocalArtifactStore
from activities.sandbox.job import Sandbox
from client.runs import short_execution
from tests.support.isolation import lacking
from tests.support.waiting import wait_for
from workflows.contracts.execution import DependencyArtifact, ExecuteJobInput, ExecutionOutcome
from workflows.contracts.plan import InputFile, JobSpec, Resources, Scalar

RUN = "run-1"


def attempt_dir(n: int = 1) -> str:
    """An attempt's directory as ``run`` lays it out: named by the (test) task workflow's run id."""
    return f"attempt-{n}-{short_execution(ActivityEnvironment().info.workflow_run_id or '')}"


@pytest.fixture
def sandbox(work_dir: Path) -> Sandbox:
    return Sandbox(work_dir=work_dir, heartbeat_every_s=0.2, max_processes=64)


def request(code: str | None, *, task: str = "t1", attempt: int = 1,
            args: dict[str, Scalar] | None = None, inputs: list[InputFile] | None = None,
            deps: list[DependencyArtifact] | None = None, memory_mb: int = 256,
            timeout_s: float = 3.0, filename: str = "job.py") -> ExecuteJobInput:
    job = JobSpec(code=code or "pass", source=code, filename=filename, args=args or {},
                  resources=Resources(memory_mb=memory_mb, timeout_s=timeout_s))
    return ExecuteJobInput(run_id=RUN, task_id=task, attempt=attempt, job=job,
                           inputs=inputs or [], dependency_artifacts=deps or [])


async def run(sandbox: Sandbox, code: str, env: ActivityEnvironment | None = None,
              **kwargs: Any) -> ExecutionOutcome:
    return await (env or ActivityEnvironment()).run(sandbox.execute_job, request(code, **kwargs))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def job_uid(outcome: ExecutionOutcome) -> int:
    return int(outcome.isolation.split(" as uid ")[1].split(";")[0])


def processes_of(uid: int) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["uids"])
            if p.info["uids"] is not None and p.info["uids"].real == uid]


NORMAL_JOB = """
import argparse, json, os, pathlib
parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int)
parser.add_argument("--name")
parser.add_argument("--flag")
flags = parser.parse_args()
args = json.loads(pathlib.Path(os.environ["ASSAY_JOB_ARGS"]).read_text())
data = pathlib.Path("data.csv").read_text()
dep = pathlib.Path("deps/prep/table.csv").read_text()
try:
    open("data.csv", "a").write("tampered")
    input_writable = True
except OSError:
    input_writable = False
pathlib.Path("out").mkdir()
pathlib.Path("out/result.txt").write_text(data.upper())
pathlib.Path("metrics.json").write_text(json.dumps({
    "n": flags.n, "name": flags.name, "flag": flags.flag, "args": args,
    "rows": len(data.splitlines()), "dep": dep, "input_writable": input_writable,
    "cwd": os.getcwd()}))
print("done")
"""


async def test_normal_job_gets_args_inputs_deps_and_reports_metrics_and_artifacts(
        work_dir: Path, tmp_path: Path) -> None:
    data = b"a,b\n1,2\n3,4\n"
    source = tmp_path / "data.csv"
    source.write_bytes(data)
    store = LocalArtifactStore(tmp_path / "store")
    sandbox = Sandbox(work_dir=work_dir, heartbeat_every_s=0.2, max_processes=64, store=store)
    stored = store.put(source)  # as `assay run` does
    source.write_bytes(b"changed after submission")  # the store keeps what was pinned
    dep_file = tmp_path / "elsewhere" / "table.csv"  # the dependency ran on another host
    dep_file.parent.mkdir(parents=True)
    dep_file.write_bytes(b"dep-content")
    store.put(dep_file)  # as its sandbox did
    dep_file.unlink()
    outcome = await run(
        sandbox, NORMAL_JOB, args={"n": 3, "name": "x y", "flag": True},
        # the recorded path is kept in the payload but never opened
        inputs=[InputFile(name="data.csv", path="/etc/shadow", sha256=stored.sha256,
                          size=stored.size)],
        deps=[DependencyArtifact(task_id="prep", name="table.csv", path=str(dep_file),
                                 sha256=sha(b"dep-content"))])

    assert outcome.outcome == "succeeded", outcome.reason + outcome.stderr_tail
    assert outcome.exit_code == 0 and outcome.stdout_tail == "done\n"
    workspace = work_dir / RUN / "t1" / attempt_dir()
    assert outcome.workspace == str(workspace)
    assert outcome.metrics == {
        "n": 3, "name": "x y", "flag": "true", "args": {"n": 3, "name": "x y", "flag": True},
        "rows": 3, "dep": "dep-content", "input_writable": False, "cwd": str(workspace)}
    assert [a.name for a in outcome.artifacts] == ["metrics.json", "out/result.txt"]
    for artifact in outcome.artifacts:
        content = Path(artifact.path).read_bytes()
        assert artifact.path == str(workspace / artifact.name)
        assert (artifact.size, artifact.sha256) == (len(content), sha(content))
        # handed back: a later job that gets the same uid cannot touch it
        assert Path(artifact.path).stat().st_uid == os.geteuid()
        with store.open(artifact.sha256) as kept:  # and put in the store for the next pools
            assert kept.read() == content
    assert (workspace / "out/result.txt").read_bytes() == data.upper()
    assert not (workspace / ".assay" / "tmp").exists()


async def test_retry_of_an_attempt_starts_from_an_empty_directory(
        sandbox: Sandbox, work_dir: Path) -> None:
    stale = work_dir / RUN / "t1" / attempt_dir(2)
    (stale / "sub").mkdir(parents=True)
    (stale / "sub" / "half-written.csv").write_text("junk")
    outcome = await run(sandbox, "open('fresh.txt', 'w').write('ok')", attempt=2)
    assert outcome.outcome == "succeeded"
    assert [a.name for a in outcome.artifacts] == ["fresh.txt"]
    assert not (stale / "sub").exists()


async def test_infinite_loop_times_out_while_heartbeating(sandbox: Sandbox) -> None:
    env = ActivityEnvironment()
    beats: list[Any] = []
    env.on_heartbeat = lambda *details: beats.append(details)
    outcome = await run(sandbox, "while True:\n    pass\n", env, timeout_s=1.0)
    assert outcome.outcome == "timeout"
    assert "wall-clock limit of 1 s" in outcome.reason
    assert 1.0 <= outcome.duration_s < 3.0
    assert len(beats) >= 3 and beats[-1][0]["phase"] == "running"


async def test_cpu_time_limit_counts_as_timeout(sandbox: Sandbox) -> None:
    code = ("import resource\nresource.setrlimit(resource.RLIMIT_CPU, (1, 2))\n"
            "while True:\n    pass\n")
    outcome = await run(sandbox, code, timeout_s=10.0)
    assert outcome.outcome == "timeout"
    assert "CPU time" in outcome.reason and outcome.signal == 24


async def test_memory_bomb_runs_out_of_memory(sandbox: Sandbox) -> None:
    # Holding the memory briefly lets the sampler see the peak even when the worker itself
    # is bigger than the job (then the kernel's ru_maxrss says nothing about the job).
    code = ("import time\nchunks = []\ntry:\n    while True:\n"
            "        chunks.append(b'x' * (16 << 20))\n"
            "except MemoryError:\n    time.sleep(0.3)\n    raise\n")
    outcome = await run(sandbox, code, memory_mb=256)
    assert outcome.outcome == "out_of_memory"
    assert "256 MiB" in outcome.reason and "MemoryError" in outcome.reason
    assert 100 < outcome.peak_memory_mb <= 256


async def test_fork_bomb_is_contained_and_leaves_nothing_behind(work_dir: Path) -> None:
    sandbox = Sandbox(work_dir=work_dir, max_processes=32)
    code = "import os\nwhile True:\n    os.fork()\n"
    outcome = await run(sandbox, code, timeout_s=10.0)
    assert outcome.outcome == "sandbox_violation"
    assert "limit of 32 processes" in outcome.reason
    if os.geteuid() == 0:
        uid = job_uid(outcome)
        await wait_for(lambda: not processes_of(uid), timeout=5, what="the forks to be killed")


async def test_file_size_limit_stops_a_disk_filler(work_dir: Path) -> None:
    sandbox = Sandbox(work_dir=work_dir, max_file_size_mb=8)
    code = "with open('big.bin', 'wb') as f:\n    f.write(b'x' * (16 << 20))\n"
    outcome = await run(sandbox, code)
    assert outcome.outcome == "sandbox_violation"
    assert "file-size limit of 8 MiB" in outcome.reason and "File too large" in outcome.reason
    assert Path(outcome.workspace, "big.bin").stat().st_size <= 8 << 20


async def test_free_space_guard_stops_many_small_files(work_dir: Path) -> None:
    stat = os.statvfs(work_dir)
    free_mb = stat.f_bavail * stat.f_frsize // (1 << 20)
    sandbox = Sandbox(work_dir=work_dir, min_free_disk_mb=free_mb - 48, heartbeat_every_s=0.05)
    code = ("import time\nfor i in range(128):\n"
            "    open(f'part-{i}.bin', 'wb').write(b'x' * (4 << 20))\n    time.sleep(0.01)\n")
    outcome = await run(sandbox, code, timeout_s=20.0)
    assert outcome.outcome == "sandbox_violation"
    assert f"fell below {free_mb - 48} MiB" in outcome.reason
    assert len(outcome.artifacts) < 128


async def test_network_connection_to_localhost_is_blocked(sandbox: Sandbox) -> None:
    if not sandbox.status.network_isolated:
        lacking("network isolation needs bubblewrap (see test_sandbox_isolation)")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        outcome = await run(sandbox, code)
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert outcome.outcome == "sandbox_violation"
    assert "network" in outcome.reason and "ConnectionRefusedError" in outcome.reason


@pytest.mark.parametrize("target", ["../x", "/etc/assay_probe", "/usr/x"])
async def test_writes_outside_the_working_directory_are_blocked(
        sandbox: Sandbox, work_dir: Path, target: str) -> None:
    host = work_dir / RUN / "t1" / "x" if target == "../x" else Path(target)
    assert not host.exists()
    try:
        outcome = await run(sandbox, f"open({target!r}, 'w').write('escaped')")
        assert not host.exists()
    finally:
        host.unlink(missing_ok=True)
    assert outcome.outcome == "sandbox_violation"
    assert repr(target) in outcome.reason and "outside its working directory" in outcome.reason


async def test_job_cannot_see_the_workers_environment(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("ASSAY_DATABASE_URL", "postgresql://user:pw@db/assay")
    code = ("import json, os\njson.dump({'key': os.environ.get('ANTHROPIC_API_KEY'), "
            "'names': sorted(os.environ)}, open('metrics.json', 'w'))\n")
    outcome = await run(sandbox, code)
    assert outcome.metrics["key"] is None
    names = set(outcome.metrics["names"]) - {"PWD"}
    assert names == {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONUNBUFFERED",
                     "PYTHONDONTWRITEBYTECODE", "USER", "LOGNAME", "ASSAY_JOB_ARGS",
                     "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"}


async def test_hundred_megabytes_of_stdout_are_counted_not_kept(work_dir: Path) -> None:
    sandbox = Sandbox(work_dir=work_dir, output_limit_bytes=64_000, heartbeat_every_s=0.05)
    me = psutil.Process()
    baseline = me.memory_info().rss
    peaks: list[int] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *_: peaks.append(me.memory_info().rss)
    code = ("import sys\nchunk = b'y' * (1 << 20)\nfor _ in range(100):\n"
            "    sys.stdout.buffer.write(chunk)\nsys.stdout.buffer.write(b'THE END')\n")
    outcome = await run(sandbox, code, env, timeout_s=30.0)
    assert outcome.outcome == "succeeded"
    assert outcome.stdout_bytes == 100 * (1 << 20) + len("THE END")
    assert outcome.output_truncated
    assert len(outcome.stdout_tail) < 64_100 and outcome.stdout_tail.endswith("yyyTHE END")
    assert "bytes omitted" in outcome.stdout_tail
    assert max([*peaks, me.memory_info().rss]) - baseline < 40 << 20


async def test_missing_module_is_a_missing_dependency(sandbox: Sandbox) -> None:
    outcome = await run(sandbox, "import assay_no_such_module_xyz\n")
    assert outcome.outcome == "missing_dependency"
    assert "'assay_no_such_module_xyz'" in outcome.reason


@pytest.mark.parametrize(("content", "error"), [
    ("{not json", "not valid JSON"), ("[1, 2]", "must hold a JSON object")])
async def test_invalid_metrics_are_reported_not_fatal(
        sandbox: Sandbox, content: str, error: str) -> None:
    outcome = await run(sandbox, f"open('metrics.json', 'w').write({content!r})")
    assert outcome.outcome == "succeeded"
    assert outcome.metrics == {}
    assert outcome.metrics_error is not None and error in outcome.metrics_error


async def test_symlinks_are_not_followed_into_artifacts(sandbox: Sandbox) -> None:
    code = "import os\nos.symlink('/etc/passwd', 'leak')\nopen('real.txt', 'w').write('r')\n"
    outcome = await run(sandbox, code)
    assert outcome.outcome == "succeeded"
    assert [a.name for a in outcome.artifacts] == ["real.txt"]
    assert "symlink 'leak' -> '/etc/passwd' is not an artifact" in outcome.reason


async def test_cancellation_kills_every_process_of_the_job(sandbox: Sandbox,
                                                           work_dir: Path) -> None:
    marker = f"{time.time_ns() % 10_000_000 + 1000}.5"
    code = ("import pathlib, subprocess, time\n"
            f"subprocess.Popen(['sleep', '{marker}'])\n"
            "pathlib.Path('started').write_text('yes')\ntime.sleep(60)\n")
    env = ActivityEnvironment()
    task = asyncio.ensure_future(run(sandbox, code, env, timeout_s=60.0))
    started = work_dir / RUN / "t1" / attempt_dir() / "started"

    def job_processes() -> list[psutil.Process]:
        found: list[psutil.Process] = []
        for proc in psutil.process_iter(["cmdline"]):
            cmdline: list[str] = proc.info["cmdline"] or []
            if marker in cmdline or (cmdline[-1:] == ["job.py"] and proc.pid != os.getpid()):
                found.append(proc)
        return found

    await wait_for(started.exists, timeout=10, what="the job to start")
    assert len(job_processes()) >= 2
    env.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_for(lambda: not job_processes(), timeout=5, what="the job's processes to end")
