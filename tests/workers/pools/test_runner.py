"""Workflows run in the SDK's sandbox, without a round trip into it per payload, same bytes."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import Any

from pydantic import BaseModel
from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():  # the sandbox imports this module for each run
    import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import WorkflowHistory
from temporalio.converter import (
    DataConverter,
    PayloadCodec,
    SerializationContext,
    WithSerializationContext,
)
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer, Worker, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner
from temporalio.worker.workflow_sandbox import (
    _runner as sandbox_runner,  # pyright: ignore[reportPrivateUsage]
)

with workflow.unsafe.imports_passed_through():
    from client.assay import DATA_CONVERTER
    from workers.pools import runner as runner_module
    from workers.pools.runner import ContextFreeRunner, context_free, workflow_runner


class Sample(BaseModel):
    """A pydantic payload, as Assay's contracts are."""

    name: str
    values: list[float]


@activity.defn(name="runner_probe_scale")
async def scale(sample: Sample) -> Sample:
    """Return the sample with its values doubled."""
    return Sample(name=sample.name, values=[2 * v for v in sample.values])


@workflow.defn(name="RunnerProbeChild")
class ProbeChild:
    @workflow.run
    async def run(self, sample: Sample) -> Sample:
        return Sample(name=sample.name.upper(), values=sample.values)


@workflow.defn(name="RunnerProbe")
class Probe:
    """An activity, a local activity and a child, each taking and returning a pydantic model."""

    @workflow.run
    async def run(self, sample: Sample) -> Sample:
        scaled = await workflow.execute_activity(scale, sample,
                                                 start_to_close_timeout=timedelta(seconds=10))
        local = await workflow.execute_local_activity(scale, scaled,
                                                      start_to_close_timeout=timedelta(seconds=10))
        return await workflow.execute_child_workflow(ProbeChild.run, local,
                                                     id=f"{workflow.info().workflow_id}-child")


class _Tagging(PayloadCodec, WithSerializationContext):
    """A codec that reads its context (as an encrypting codec keyed per workflow might)."""

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)

    def with_context(self, context: SerializationContext) -> _Tagging:
        return _Tagging()


class _Silent(PayloadCodec):
    """A codec that takes no context."""

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)


@pytest.fixture
def sandbox_lines(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """What the sandbox is asked to run, counted by the call it makes (activate, context…)."""
    seen: Counter[str] = Counter()
    original = sandbox_runner._Instance._run_code  # pyright: ignore[reportPrivateUsage]

    def counted(self: Any, code: Any, **extra: Any) -> None:
        text = code if isinstance(code, str) else code.co_names
        kind = next((k for k in ("get_serialization_context", "get_external_store_context",
                                 "activate") if k in text), "other")
        seen[kind] += 1
        original(self, code, **extra)

    monkeypatch.setattr(sandbox_runner._Instance, "_run_code",  # pyright: ignore[reportPrivateUsage]
                        counted)
    yield seen


async def _run(env: WorkflowEnvironment, runner: WorkflowRunner) -> tuple[Sample, WorkflowHistory]:
    queue = f"runner-{uuid.uuid4().hex[:8]}"
    async with Worker(env.client, task_queue=queue, workflows=[Probe, ProbeChild],
                      activities=[scale], workflow_runner=runner):
        handle = await env.client.start_workflow(
            Probe.run, Sample(name="x", values=[0.5, 1.5]), id=f"probe-{uuid.uuid4()}",
            task_queue=queue)
        result = await handle.result()
        return result, await handle.fetch_history()


CARRIERS = {"workflow_execution_started_event_attributes": "input",
            "activity_task_scheduled_event_attributes": "input",
            "activity_task_completed_event_attributes": "result",
            "start_child_workflow_execution_initiated_event_attributes": "input",
            "child_workflow_execution_completed_event_attributes": "result",
            "workflow_execution_completed_event_attributes": "result"}
"""The events that carry the workflow's payloads, and the field each carries them in."""


def _payloads(history: WorkflowHistory) -> list[bytes]:
    """Every payload's data in the history, in order (ids and times differ between runs)."""
    found: list[bytes] = []
    for event in history.events:
        kind = event.WhichOneof("attributes")
        if kind in CARRIERS:
            found.extend(p.data for p in getattr(getattr(event, kind), CARRIERS[kind]).payloads)
        elif kind == "marker_recorded_event_attributes":  # the local activity's result
            found.extend(p.data for p in event.marker_recorded_event_attributes.details["result"]
                         .payloads)
    return found


def test_assays_converter_takes_no_context() -> None:
    assert context_free(DATA_CONVERTER)
    assert runner_module.sdk_fits(), "the SDK's execution no longer has the methods answered"
    assert type(workflow_runner(DATA_CONVERTER)) is ContextFreeRunner


def test_an_sdk_without_those_methods_gets_its_own_sandbox(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(sandbox_runner._Instance,  # pyright: ignore[reportPrivateUsage]
                        "get_external_store_context")
    assert not runner_module.sdk_fits()
    assert type(workflow_runner(DATA_CONVERTER)) is SandboxedWorkflowRunner


def test_a_converter_that_reads_its_context_keeps_the_sdks_own_sandbox() -> None:
    reading = DataConverter(payload_codec=_Tagging())
    assert not context_free(reading)
    assert type(workflow_runner(reading)) is SandboxedWorkflowRunner
    # A codec that takes no context is as free as none.
    assert context_free(DataConverter(payload_codec=_Silent()))


async def test_a_run_enters_the_sandbox_once_per_activation_and_writes_the_same_bytes(
        time_env: WorkflowEnvironment, sandbox_lines: Counter[str]) -> None:
    stock_result, stock_history = await _run(time_env, SandboxedWorkflowRunner())
    stock = Counter(sandbox_lines)
    sandbox_lines.clear()
    hits = runner_module._compiled.cache_info().hits  # pyright: ignore[reportPrivateUsage]
    result, history = await _run(time_env, workflow_runner(DATA_CONVERTER))
    # The SDK's sandbox is asked a context for each payload it visits; this one never is.
    assert stock["get_serialization_context"] >= 2 * stock["activate"]
    assert sandbox_lines["get_serialization_context"] == 0
    assert sandbox_lines["get_external_store_context"] == 0
    assert sandbox_lines["activate"] == stock["activate"]
    # Its lines are compiled once: every activation after the first reuses one.
    assert runner_module._compiled.cache_info().hits - hits >= sandbox_lines["activate"] - 1  # pyright: ignore[reportPrivateUsage]
    # Same results, same payload bytes, and each history replays under the SDK's own sandbox.
    assert result == stock_result == Sample(name="X", values=[2.0, 6.0])
    assert _payloads(history) == _payloads(stock_history)
    assert len(_payloads(history)) >= 7
    replayer = Replayer(workflows=[Probe, ProbeChild], data_converter=DATA_CONVERTER)
    for saved in (history, stock_history):
        await replayer.replay_workflow(saved)
