"""A plan runs with encrypted payloads, and its history keeps none of its text in the clear.

A marker is planted in the plan's context and a task's action, and in the data file's name;
the run goes end to end on the dev server with every pool's worker encrypting. Its workflows'
histories, read raw by a client with no codec, hold no byte of the marker; through the codec
server (as the Web UI reads them) they show it; a client with another key or none is refused
with a named error, and one whose current key is newer still reads it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import SecretStr
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from client.assay import DATA_CONVERTER, AssayClient
from tests.support.e2e import (
    EXAMPLE,
    ROOT,
    isolated_settings,
    pools_serving,
    queue_env,
    store_of,
    worker_env,
)
from tests.workers.connection.codec_support import call, codec_server, payloads_of, ui_body
from workers.connection import EncryptionCodec, UnknownCodecKeyError, connect, key_ring
from workers.connection.codec import ENCODING
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import queues_from
from workflows.research.workflow import ResearchWorkflow

pytestmark = pytest.mark.integration

MARKER = "QUOKKA-canary-93b1f0"
KEY = base64.b64encode(b"q" * 32).decode()
OTHER = base64.b64encode(b"z" * 32).decode()


def planted_plan(folder: Path) -> Path:
    """The iris example with the marker in its context, a task's action and the data's name."""
    shutil.copytree(EXAMPLE.parent, folder)
    data = f"iris-{MARKER}.csv"
    (folder / "iris.csv").rename(folder / data)
    path = folder / EXAMPLE.name
    plan = json.loads(path.read_text().replace("iris.csv", data))
    plan["context"] += f" ({MARKER})"
    plan["decisions"][0]["action"] += f" [{MARKER}]"
    path.write_text(json.dumps(plan))
    return path


async def histories(client: Client, since: datetime) -> dict[str, bytes]:
    """Every workflow started since ``since``: its history's raw bytes, by workflow ID."""
    raw: dict[str, bytes] = {}
    query = f'StartTime >= "{since.isoformat().replace("+00:00", "Z")}"'
    async for wf in client.list_workflows(query):
        history = await client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
        raw[wf.id] = b"".join(e.SerializeToString() for e in history.events)
    return raw


async def test_an_encrypted_run_leaves_no_plaintext_in_history(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str) -> None:
    address = dev_env.client.service_client.config.target_host
    settings = isolated_settings(tmp_path / "assay", task_queue).model_copy(
        update={"temporal_address": address, "codec_keys": SecretStr(f"k1={KEY}")})
    encrypting = await connect(settings)
    since = datetime.now(UTC)
    async with pools_serving(settings, fresh_database_url, encrypting):
        client = AssayClient(encrypting, task_queue=settings.queue_orchestration)
        req = load_plan(planted_plan(tmp_path / "plan"), max_bytes=settings.max_plan_bytes,
                        queues=queues_from(settings), store=store_of(settings))
        run_id = await client.start_run(req, again=True)
        result = await client.result(run_id)
    assert result.status == "completed", [(t.task_id, t.status_reason) for t in result.tasks]

    plain_reader = dev_env.client  # Assay's converter, no codec: what the server holds
    raw = await histories(plain_reader, since)
    assert run_id in raw and any(".task-" in wid for wid in raw), sorted(raw)
    leaks = [wid for wid, data in raw.items() if MARKER.encode() in data]
    assert leaks == [], f"the marker is in the clear in {leaks}"

    history = await plain_reader.get_workflow_handle(run_id).fetch_history()
    started = next(e for e in history.events
                   if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)
    sealed = list(started.workflow_execution_started_event_attributes.input.payloads)
    assert [p.metadata["encoding"] for p in sealed] == [ENCODING]

    ring = key_ring(settings)
    assert ring is not None
    with codec_server(EncryptionCodec(ring)) as server:  # what the Web UI shows
        status, _, answer = call(f"{server.url}/decode", body=ui_body(sealed))
    assert status == 200
    [shown] = payloads_of(answer)
    assert MARKER in shown.data.decode()

    rotated = settings.model_copy(update={"codec_keys": SecretStr(f"k2={OTHER},k1={KEY}")})
    reread = await (await connect(rotated)).get_workflow_handle_for(
        ResearchWorkflow.run, run_id).result()
    assert reread.status == "completed"  # the old key, kept after the new one, still reads
    with pytest.raises(UnknownCodecKeyError, match="encrypted with key 'k1'"):
        other = settings.model_copy(update={"codec_keys": SecretStr(f"k2={OTHER}")})
        await (await connect(other)).get_workflow_handle(run_id).result()
    with pytest.raises(KeyError, match="binary/encrypted"):  # no key at all
        await plain_reader.get_workflow_handle(run_id).result()
    assert DATA_CONVERTER.payload_codec is None


async def assay(env: dict[str, str], *args: str) -> tuple[int, str]:
    """Exit code and output (stdout and stderr) of an ``assay`` command."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "workers.cli", *args, env=env, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode()


async def test_the_cli_reads_an_encrypted_run_with_the_key_and_says_why_not_without(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str) -> None:
    address = dev_env.client.service_client.config.target_host
    settings = isolated_settings(tmp_path / "assay", task_queue).model_copy(
        update={"temporal_address": address, "codec_keys": SecretStr(f"k1={KEY}")})
    async with pools_serving(settings, fresh_database_url, await connect(settings)):
        base = worker_env(address, fresh_database_url, settings.data_dir, **queue_env(settings))
        plan = planted_plan(tmp_path / "plan")
        code, out = await assay({**base, "ASSAY_CODEC_KEYS": f"k1={KEY}"},
                                "run", str(plan), "--wait")
        assert code == 0, out
        found = re.search(r"assay-run-[a-z0-9-]*[a-z0-9]", out)
        assert found is not None, out
        run_id = found.group(0)

        code, out = await assay({**base, "ASSAY_CODEC_KEYS": f"k1={KEY}"}, "status", run_id)
        assert code == 0 and "completed" in out, out
        code, out = await assay(base, "status", run_id)
        assert code == 1 and "payloads are encrypted and no payload key is set" in out, out
        code, out = await assay({**base, "ASSAY_CODEC_KEYS": f"k2={OTHER}"}, "status", run_id)
        assert code == 1 and "encrypted with key 'k1'" in out, out
        code, out = await assay({**base, "ASSAY_CODEC_KEYS": "k1=short"}, "status", run_id)
        assert code == 1 and "ASSAY_CODEC_KEYS: the key of 'k1' is not base64" in out, out
