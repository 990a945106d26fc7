"""``call_model`` as a real activity under Temporal: Temporal, not the SDK, retries a rate
limit after the advised delay, and a refused key fails the workflow after one request."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import timedelta

import pytest
from temporalio import workflow
from temporalio.client import WorkflowFailureError
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

with workflow.unsafe.imports_passed_through():
    from pydantic import SecretStr

    from activities.llm.gateway import ModelGateway
    from tests.activities.llm.test_models import GOOD, KEY, MODEL, ask
    from tests.support.fake_anthropic import FakeAnthropic, HttpError, ToolUse
    from workflows.catalogue import CALL_MODEL
    from workflows.contracts.spend import ModelAnswer, ModelCall

pytestmark = pytest.mark.integration


@workflow.defn
class AskModelWorkflow:
    """The smallest caller: one model call with a plain retry policy (no error-type list,
    so only the activity's own non-retryable flag can stop a retry)."""

    @workflow.run
    async def run(self, call: ModelCall) -> ModelAnswer:
        return await workflow.execute_activity(
            CALL_MODEL.name, call, result_type=ModelAnswer,
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=RetryPolicy(initial_interval=timedelta(milliseconds=50),
                                     maximum_attempts=4))


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
async def worker(time_env: WorkflowEnvironment, task_queue: str,
                 fake: FakeAnthropic) -> AsyncIterator[Worker]:
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL})
    async with Worker(time_env.client, task_queue=task_queue, workflows=[AskModelWorkflow],
                      activities=[gateway.call_model]) as running:
        yield running
    await gateway.aclose()


async def test_a_rate_limit_is_retried_by_temporal_after_the_advised_delay(
        time_env: WorkflowEnvironment, worker: Worker, fake: FakeAnthropic) -> None:
    fake.script(HttpError(429, "slow down", retry_after="1"), ToolUse(GOOD))
    handle = await time_env.client.start_workflow(
        AskModelWorkflow.run, ask(), id=f"ask-{worker.task_queue}",
        task_queue=worker.task_queue)
    answer = await handle.result()
    assert answer.output == GOOD and answer.repairs == 0
    first, second = fake.requests
    assert second.headers["x-stainless-retry-count"] == "0"
    assert first.body == second.body
    history = await handle.fetch_history()
    # The time-skipping server skips the wait, but its clock shows it: the second attempt
    # started 1s (retry-after) after scheduling, not 50ms (the policy's interval).
    scheduled, started = (e for e in history.events
                          if e.HasField("activity_task_scheduled_event_attributes")
                          or e.HasField("activity_task_started_event_attributes"))
    assert started.activity_task_started_event_attributes.attempt == 2
    waited = started.event_time.ToDatetime() - scheduled.event_time.ToDatetime()
    assert timedelta(seconds=1) <= waited < timedelta(seconds=2)
    assert KEY not in history.to_json()


async def test_a_refused_key_fails_the_workflow_after_one_request(
        time_env: WorkflowEnvironment, worker: Worker, fake: FakeAnthropic) -> None:
    fake.script(HttpError(401, "invalid x-api-key"), ToolUse(GOOD))
    handle = await time_env.client.start_workflow(
        AskModelWorkflow.run, ask(), id=f"ask-{worker.task_queue}",
        task_queue=worker.task_queue)
    with pytest.raises(WorkflowFailureError) as failed:
        await handle.result()
    activity_error = failed.value.cause
    assert isinstance(activity_error, ActivityError)
    cause = activity_error.cause
    assert isinstance(cause, ApplicationError)
    assert (cause.type, cause.non_retryable) == ("ModelRejectedRequest", True)
    assert "HTTP 401" in cause.message and "ASSAY_ANTHROPIC_API_KEY" in cause.message
    assert len(fake.requests) == 1
    assert KEY not in (await handle.fetch_history()).to_json()
