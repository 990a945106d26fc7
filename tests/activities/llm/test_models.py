"""The model gateway driving the real SDK against the fake Messages API server:
structured answers, the repair loop, error mapping, accounting and budgets."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel, Field, SecretStr
from temporalio.exceptions import ApplicationError

from activities.llm.gateway import ModelGateway
from tests.support.fake_anthropic import (
    FakeAnthropic,
    HttpError,
    Malformed,
    Text,
    ToolUse,
    usage,
)
from workflows.contracts.spend import Budget, ChatMessage, ModelCall, Usage

KEY = "sk-ant-test-0123456789-do-not-leak"
MODEL = "claude-opus-5"
GOOD = {"verdict": "APPROVE", "confidence": 0.9}


class Verdict(BaseModel):
    """A reviewer's verdict."""

    verdict: str = Field(pattern="^(APPROVE|REJECT)$")
    confidence: float = Field(ge=0, le=1)


def ask(**fields: Any) -> ModelCall:
    base: dict[str, Any] = {
        "run_id": "run-1", "task_id": "t1", "role": "reviewer", "system": "You review jobs.",
        "messages": [ChatMessage(role="user", content="Review job 7.")],
        "output_schema_name": "Verdict", "output_schema": Verdict.model_json_schema(),
        "max_tokens": 512}
    return ModelCall(**{**base, **fields})


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
async def gateway(fake: FakeAnthropic) -> AsyncIterator[ModelGateway]:
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL})
    yield gateway
    await gateway.aclose()


async def failure(gateway: ModelGateway, call: ModelCall) -> ApplicationError:
    with pytest.raises(ApplicationError) as err:
        await gateway.call_model(call)
    return err.value


# --- structured answers and what the SDK sent ----------------------------------------------


async def test_a_structured_answer_is_validated_and_accounted(
        fake: FakeAnthropic, gateway: ModelGateway) -> None:
    fake.script(ToolUse(GOOD, text="Looks fine.", usage=usage(1000, 200, 3000, 0)))
    answer = await gateway.call_model(ask())
    assert Verdict.model_validate(answer.output) == Verdict(verdict="APPROVE", confidence=0.9)
    assert (answer.model, answer.repairs, answer.request_id) == (MODEL, 0, "req_fake_1")
    assert answer.usage.cache_creation_input_tokens == 3000
    assert answer.usage.cost_usd == pytest.approx((1000 * 5 + 200 * 25 + 3000 * 5 * 1.25) / 1e6)
    assert len(answer.exchange_id) == 32 and not answer.replayed


async def test_the_sdk_sends_cache_control_and_a_forced_tool_and_the_key_only_in_a_header(
        fake: FakeAnthropic, gateway: ModelGateway) -> None:
    fake.script(ToolUse(GOOD))
    await gateway.call_model(ask())
    (sent,) = fake.requests
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert sent.body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert sent.body["tool_choice"] == {"type": "tool", "name": "Verdict",
                                        "disable_parallel_tool_use": True}
    assert sent.body["tools"][0]["input_schema"] == Verdict.model_json_schema()
    assert (sent.body["model"], sent.body["max_tokens"]) == (MODEL, 512)
    assert KEY in sent.headers["authorization"]
    assert KEY.encode() not in sent.raw
    assert sent.headers["x-stainless-retry-count"] == "0"


async def test_the_role_default_model_is_used_unless_the_call_names_one(
        fake: FakeAnthropic) -> None:
    gateway = ModelGateway(SecretStr(KEY), fake.base_url,
                           {"reviewer": "claude-haiku-4-5", "default": MODEL})
    fake.script(ToolUse(GOOD), ToolUse(GOOD), ToolUse(GOOD))
    await gateway.call_model(ask())
    await gateway.call_model(ask(role="planner"))
    await gateway.call_model(ask(model="claude-sonnet-5"))
    await gateway.aclose()
    assert [r.body["model"] for r in fake.requests] == [
        "claude-haiku-4-5", MODEL, "claude-sonnet-5"]


# --- the repair loop -----------------------------------------------------------------------


async def test_an_invalid_answer_is_repaired_and_usage_summed(
        fake: FakeAnthropic, gateway: ModelGateway) -> None:
    fake.script(ToolUse({"verdict": "MAYBE"}, usage=usage(100, 10)),
                ToolUse(GOOD, usage=usage(300, 20)))
    answer = await gateway.call_model(ask())
    assert answer.output == GOOD and answer.repairs == 1
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (400, 30)
    assert answer.usage.cost_usd == pytest.approx((400 * 5 + 30 * 25) / 1e6)
    first, second = fake.requests
    assert second.body["messages"][1] == {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_fake_1", "name": "Verdict",
         "input": {"verdict": "MAYBE"}}]}
    (result,) = second.body["messages"][2]["content"]
    assert (result["type"], result["tool_use_id"], result["is_error"]) == (
        "tool_result", "toolu_fake_1", True)
    assert "'confidence' is a required property" in result["content"]
    assert "at `verdict`: 'MAYBE' does not match" in result["content"]
    assert second.body["system"] == first.body["system"]


async def test_an_always_invalid_answer_fails_after_max_repairs(
        fake: FakeAnthropic, gateway: ModelGateway) -> None:
    fake.script(*[ToolUse({"verdict": "MAYBE", "confidence": 2})] * 5)
    err = await failure(gateway, ask(max_repairs=2))
    assert err.type == "InvalidModelOutput" and err.non_retryable
    assert "schema 'Verdict'" in str(err) and "after 2 repairs" in str(err)
    assert "at `confidence`: 2 is greater than the maximum of 1" in str(err)
    assert len(fake.requests) == 3
    spent = Usage.model_validate(err.details[0]["usage"])
    assert (spent.input_tokens, spent.output_tokens) == (300, 60)


@pytest.mark.parametrize(("first", "said"), [
    (ToolUse(GOOD, name="submit_review"), "There is no tool named 'submit_review'"),
    (Text("APPROVE, confidence 0.9"), "did not call the `Verdict` tool"),
    (ToolUse('{"verdict": "APPROVE", "confidence": 0.9'), "must be a JSON object, not str"),
])
async def test_unusable_answers_are_sent_back_with_the_reason(
        fake: FakeAnthropic, gateway: ModelGateway, first: ToolUse | Text, said: str) -> None:
    fake.script(first, ToolUse(GOOD))
    answer = await gateway.call_model(ask())
    assert answer.output == GOOD and answer.repairs == 1
    repair = fake.requests[1].body["messages"][2]["content"][0]
    assert said in (repair.get("content") or repair.get("text"))


async def test_an_oversize_answer_is_sent_back(fake: FakeAnthropic) -> None:
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL},
                           max_answer_bytes=2048)
    fake.script(ToolUse({**GOOD, "notes": "x" * 4096}), ToolUse(GOOD))
    answer = await gateway.call_model(ask())
    await gateway.aclose()
    assert answer.repairs == 1
    assert "over the limit of 2048 bytes" in fake.requests[1].body["messages"][2][
        "content"][0]["content"]


async def test_an_answer_cut_off_at_max_tokens_fails_without_repairs(
        fake: FakeAnthropic, gateway: ModelGateway) -> None:
    fake.script(ToolUse({"verdict": "APP"}, stop_reason="max_tokens"), ToolUse(GOOD))
    err = await failure(gateway, ask())
    assert err.type == "InvalidModelOutput" and "raise max_tokens" in str(err)
    assert len(fake.requests) == 1


async def test_a_refusal_fails_without_repairs(
        fake: FakeAnthropic, gateway: ModelGateway) -> None:
    fake.script(Text("I can't help with that.", stop_reason="refusal"), ToolUse(GOOD))
    err = await failure(gateway, ask())
    assert (err.type, err.non_retryable) == ("ModelRefused", True)
    assert "refused to answer" in str(err) and "role 'reviewer'" in str(err)
    assert len(fake.requests) == 1


# --- service errors ------------------------------------------------------------------------


async def test_429_is_retryable_after_the_advised_delay(
        fake: FakeAnthropic, gateway: ModelGateway) -> None:
    fake.script(HttpError(429, "slow down", retry_after="7"))
    err = await failure(gateway, ask())
    assert (err.type, err.non_retryable) == ("ModelRateLimited", False)
    assert err.next_retry_delay == timedelta(seconds=7)
    assert "HTTP 429" in str(err) and "slow down" in str(err) and "role 'reviewer'" in str(err)
    assert len(fake.requests) == 1


@pytest.mark.parametrize(("status", "kind"), [(529, "ModelOverloaded"),
                                              (500, "ModelServerError"),
                                              (503, "ModelServerError")])
async def test_overload_and_server_errors_are_retryable(
        fake: FakeAnthropic, gateway: ModelGateway, status: int, kind: str) -> None:
    fake.script(HttpError(status))
    err = await failure(gateway, ask())
    assert (err.type, err.non_retryable, err.next_retry_delay) == (kind, False, None)
    assert len(fake.requests) == 1


@pytest.mark.parametrize(("status", "hint"), [
    (400, "check the model name, max_tokens and the output schema"),
    (401, "set ASSAY_ANTHROPIC_API_KEY"),
    (403, "may not use this model"),
    (404, "does not exist"),
])
async def test_refused_requests_are_permanent(
        fake: FakeAnthropic, gateway: ModelGateway, status: int, hint: str) -> None:
    fake.script(HttpError(status, f"refused with {status}"))
    err = await failure(gateway, ask())
    assert (err.type, err.non_retryable) == ("ModelRejectedRequest", True)
    assert hint in str(err) and f"refused with {status}" in str(err)
    assert KEY not in str(err)
    assert len(fake.requests) == 1


async def test_a_key_echoed_by_the_server_is_scrubbed(
        fake: FakeAnthropic, gateway: ModelGateway) -> None:
    fake.script(HttpError(401, f"invalid x-api-key {KEY}"))
    err = await failure(gateway, ask())
    assert KEY not in str(err) and "[api key]" in str(err)


async def test_a_malformed_body_is_a_retryable_server_error(
        fake: FakeAnthropic, gateway: ModelGateway) -> None:
    fake.script(Malformed(), Malformed(b"[1, 2]"))
    first = await failure(gateway, ask())
    second = await failure(gateway, ask())
    assert (first.type, first.non_retryable) == ("ModelServerError", False)
    assert "malformed response" in str(first) and "not a JSON object" in str(second)


async def test_an_unreachable_server_is_retryable(fake: FakeAnthropic) -> None:
    base_url = fake.base_url
    fake.stop()
    gateway = ModelGateway(SecretStr(KEY), base_url, {"default": MODEL}, timeout_s=5)
    err = await failure(gateway, ask())
    await gateway.aclose()
    assert (err.type, err.non_retryable) == ("ModelUnreachable", False)


# --- configuration and budgets -------------------------------------------------------------


async def test_no_key_and_no_replay_is_not_configured(fake: FakeAnthropic) -> None:
    gateway = ModelGateway(None, fake.base_url, {"default": MODEL})
    err = await failure(gateway, ask())
    assert (err.type, err.non_retryable) == ("ModelNotConfigured", True)
    assert "ASSAY_ANTHROPIC_API_KEY" in str(err)
    assert fake.requests == []


async def test_no_model_for_the_role_is_not_configured(fake: FakeAnthropic) -> None:
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"planner": MODEL})
    err = await failure(gateway, ask(role="reviewer"))
    assert err.type == "ModelNotConfigured" and "role 'reviewer'" in str(err)
    assert fake.requests == []


async def test_an_exhausted_budget_stops_the_call_before_it_is_made(
        fake: FakeAnthropic, gateway: ModelGateway) -> None:
    budget = Budget(max_cost_usd=0.01, spent=Usage(cost_usd=0.01))
    err = await failure(gateway, ask(budget=budget))
    assert (err.type, err.non_retryable) == ("BudgetExhausted", True)
    assert "cost budget of $0.0100 reached" in str(err)
    assert fake.requests == []


async def test_the_budget_also_stops_repair_rounds(
        fake: FakeAnthropic, gateway: ModelGateway) -> None:
    fake.script(ToolUse({"verdict": "MAYBE"}, usage=usage(800, 100)), ToolUse(GOOD))
    err = await failure(gateway, ask(budget=Budget(max_tokens=900)))
    assert err.type == "BudgetExhausted" and "token budget of 900" in str(err)
    assert err.details[0]["usage"]["input_tokens"] == 800
    assert len(fake.requests) == 1


async def test_unknown_models_are_counted_but_not_priced(
        fake: FakeAnthropic, gateway: ModelGateway) -> None:
    fake.script(ToolUse(GOOD))
    answer = await gateway.call_model(ask(model="claude-unreleased-9"))
    assert answer.usage.cost_usd == 0 and answer.usage.unpriced_models == ["claude-unreleased-9"]
    assert answer.usage.input_tokens == 100
