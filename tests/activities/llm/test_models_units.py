"""The model layer's pure parts: contracts, prices, budgets, retry delays, answer checks,
request keys and recordings on disk. No server."""

from __future__ import annotations

import email.utils
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field, ValidationError
from temporalio.exceptions import ApplicationError

from activities.llm.errors import MAX_ADVISED_DELAY_S, advised_delay
from activities.llm.output import OutputContract, repair_turn
from activities.llm.pricing import price_of, priced
from activities.llm.recording import parse_recording, request_key
from activities.llm.request import Conversation, tool_choice
from workflows.contracts.spend import Budget, ChatMessage, ModelCall, Usage


class Verdict(BaseModel):
    """A reviewer's verdict."""

    verdict: str = Field(pattern="^(APPROVE|REJECT)$")
    confidence: float = Field(ge=0, le=1)
    reasons: list[str] = Field(default_factory=list[str])


SCHEMA = Verdict.model_json_schema()


def call(**fields: Any) -> ModelCall:
    base: dict[str, Any] = {
        "run_id": "run-1", "role": "reviewer", "system": "You review jobs.",
        "messages": [ChatMessage(role="user", content="Review job 7.")],
        "output_schema_name": "Verdict", "output_schema": SCHEMA, "max_tokens": 512}
    return ModelCall(**{**base, **fields})


def tool_response(answer: Any, *, name: str = "Verdict", stop: str = "tool_use",
                  ) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": answer}],
            "stop_reason": stop}


# --- contracts -----------------------------------------------------------------------------


def test_usage_adds_every_field_and_unions_unpriced_models() -> None:
    a = Usage(input_tokens=1, output_tokens=2, cache_creation_input_tokens=3,
              cache_read_input_tokens=4, cost_usd=0.5, unpriced_models=["x"])
    b = Usage(input_tokens=10, output_tokens=20, cache_creation_input_tokens=30,
              cache_read_input_tokens=40, cost_usd=0.25, unpriced_models=["y", "x"])
    total = a + b
    assert (total.input_tokens, total.output_tokens, total.cache_creation_input_tokens,
            total.cache_read_input_tokens, total.cost_usd) == (11, 22, 33, 44, 0.75)
    assert total.unpriced_models == ["x", "y"]
    assert total.total_tokens == 110


def test_budget_names_the_limit_it_reached() -> None:
    spent = Usage(input_tokens=900, output_tokens=100, cost_usd=0.02)
    assert Budget(max_tokens=1001, spent=spent).exhausted() is False
    assert "token budget of 1000 reached" in str(Budget(max_tokens=1000, spent=spent)
                                                 .exhausted_by())
    assert "cost budget of $0.0200" in str(Budget(max_cost_usd=0.02, spent=spent)
                                           .exhausted_by())
    assert Budget(max_tokens=1500).add(spent).exhausted_by(Usage(output_tokens=500))
    assert Budget().exhausted() is False


def test_model_call_refuses_a_schema_that_is_not_an_object_or_a_bad_tool_name() -> None:
    with pytest.raises(ValidationError, match="must describe a JSON object"):
        call(output_schema={"type": "string"})
    with pytest.raises(ValidationError, match="output_schema_name"):
        call(output_schema_name="has spaces")


def test_contracts_hold_no_secret_fields() -> None:
    for model in (ModelCall, Usage, Budget):
        assert not any("key" in name or "secret" in name for name in model.model_fields)


# --- prices --------------------------------------------------------------------------------


def test_cost_per_million_with_cache_write_and_read_multipliers() -> None:
    usage = priced("claude-opus-5", 1_000_000, 1_000_000, 1_000_000, 1_000_000)
    assert usage.cost_usd == pytest.approx(5 + 25 + 5 * 1.25 + 5 * 0.1)
    assert usage.unpriced_models == []


def test_longest_prefix_wins_and_dated_ids_find_their_family() -> None:
    assert price_of("claude-opus-4-1-20250805") == price_of("claude-opus-4")
    assert price_of("claude-opus-4-5-20251101") == price_of("claude-opus-5")
    assert price_of("claude-sonnet-5-5") != price_of("claude-sonnet-5")


def test_long_prompts_cost_more_where_the_family_says_so() -> None:
    short = priced("claude-haiku-5-5", 100_000, 1000, 0, 0).cost_usd
    long = priced("claude-haiku-5-5", 100_001, 1000, 0, 0).cost_usd
    assert short == pytest.approx((100_000 * 0.1 + 1000 * 0.5) / 1e6)
    assert long == pytest.approx((100_001 * 0.1 + 1000 * 0.5) / 1e6 * 5)


def test_unknown_model_costs_nothing_and_is_named() -> None:
    usage = priced("someone-elses-model", 1000, 1000, 0, 0)
    assert usage.cost_usd == 0 and usage.unpriced_models == ["someone-elses-model"]
    assert usage.input_tokens == 1000


# --- retry delays --------------------------------------------------------------------------


def test_advised_delay_reads_seconds_milliseconds_and_http_dates() -> None:
    assert advised_delay({"Retry-After": "7"}) == timedelta(seconds=7)
    assert advised_delay({"retry-after": "1.5"}) == timedelta(seconds=1.5)
    assert advised_delay({"retry-after-ms": "250", "retry-after": "9"}) == timedelta(
        milliseconds=250)
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    delay = advised_delay({"retry-after": date})
    assert delay is not None and 25 <= delay.total_seconds() <= 31
    assert advised_delay({"retry-after": "999999"}) == timedelta(seconds=MAX_ADVISED_DELAY_S)
    assert advised_delay({"retry-after": "soon"}) is None
    assert advised_delay({"retry-after": "0"}) is None
    assert advised_delay({}) is None


# --- reading answers -----------------------------------------------------------------------


def test_a_valid_answer_is_the_output() -> None:
    reading = OutputContract("Verdict", SCHEMA).read(
        tool_response({"verdict": "APPROVE", "confidence": 0.9}))
    assert reading.output == {"verdict": "APPROVE", "confidence": 0.9}
    assert reading.problem == ""


def test_schema_violations_are_located_by_path() -> None:
    reading = OutputContract("Verdict", SCHEMA).read(
        tool_response({"verdict": "MAYBE", "reasons": ["ok", 3]}))
    assert reading.output is None
    assert "at the top level: 'confidence' is a required property" in reading.problem
    assert "at `reasons[1]`: 3 is not of type 'string'" in reading.problem
    assert "at `verdict`: 'MAYBE' does not match" in reading.problem
    assert reading.tool_use_ids == ("toolu_1",)


@pytest.mark.parametrize(("response", "expected"), [
    ({"content": [{"type": "text", "text": "I approve."}], "stop_reason": "end_turn"},
     "did not call the `Verdict` tool (it said: 'I approve.')"),
    (tool_response({"verdict": "APPROVE", "confidence": 1}, name="approve"),
     "There is no tool named 'approve'; the only tool is `Verdict`"),
    (tool_response('{"verdict": "APPROVE"'), "must be a JSON object, not str"),
    (tool_response(["APPROVE"]), "must be a JSON object, not list"),
])
def test_unusable_answers_say_what_to_fix(response: dict[str, Any], expected: str) -> None:
    reading = OutputContract("Verdict", SCHEMA).read(response)
    assert reading.output is None and not reading.hopeless
    assert expected in reading.problem
    assert "Call the `Verdict` tool once" in reading.problem


def test_an_oversize_answer_is_refused_with_its_size() -> None:
    big = {"verdict": "APPROVE", "confidence": 1, "reasons": ["x" * 2000]}
    reading = OutputContract("Verdict", SCHEMA, max_bytes=1024).read(tool_response(big))
    assert reading.output is None
    assert "over the limit of 1024 bytes" in reading.problem


def test_cut_off_and_refused_answers_are_hopeless() -> None:
    contract = OutputContract("Verdict", SCHEMA)
    cut = contract.read(tool_response({"verdict": "APP"}, stop="max_tokens"))
    assert "raise max_tokens" in cut.hopeless
    refused = contract.read({"content": [], "stop_reason": "refusal"})
    assert refused.hopeless == "the model refused to answer"


def test_an_invalid_schema_is_a_permanent_error() -> None:
    with pytest.raises(ApplicationError) as err:
        OutputContract("Broken", {"type": "object", "properties": {"a": {"type": "nope"}}})
    assert err.value.type == "InvalidOutputSchema" and err.value.non_retryable


def test_repairs_answer_every_tool_call_or_speak_plainly() -> None:
    contract = OutputContract("Verdict", SCHEMA)
    two: dict[str, Any] = {"content": [{"type": "tool_use", "id": "a", "name": "x", "input": {}},
                       {"type": "tool_use", "id": "b", "name": "y", "input": {}}]}
    turn = repair_turn(contract.read(two))
    assert [(b["type"], b["tool_use_id"], b["is_error"]) for b in turn] == [
        ("tool_result", "a", True), ("tool_result", "b", True)]
    text = repair_turn(contract.read({"content": [{"type": "text", "text": "hi"}]}))
    assert text[0]["type"] == "text" and "did not call" in text[0]["text"]


# --- requests ------------------------------------------------------------------------------


def test_the_request_caches_the_system_prompt_and_forces_the_tool() -> None:
    request = Conversation(call(), "claude-opus-5").request()
    assert request["system"][0] == {"type": "text", "text": "You review jobs.",
                                    "cache_control": {"type": "ephemeral"}}
    assert request["tools"][0]["name"] == "Verdict"
    assert request["tools"][0]["input_schema"] == SCHEMA
    assert request["tools"][0]["description"].endswith("A reviewer's verdict.")
    assert request["tool_choice"] == {"type": "tool", "name": "Verdict",
                                      "disable_parallel_tool_use": True}


def test_models_that_think_first_are_not_forced() -> None:
    assert tool_choice("claude-sonnet-5-5", "V")["type"] == "auto"
    assert tool_choice("claude-sonnet-5", "V")["type"] == "tool"


def test_request_keys_are_stable_and_differ_with_the_prompt() -> None:
    first = Conversation(call(), "claude-opus-5").key()
    assert first == Conversation(call(run_id="another-run"), "claude-opus-5").key()
    assert first != Conversation(call(), "claude-sonnet-5").key()
    assert first != Conversation(call(system="You review plans."), "claude-opus-5").key()
    assert first == request_key(model="claude-opus-5", system="You review jobs.",
                                messages=[{"role": "user", "content": "Review job 7."}],
                                tool_name="Verdict", tool_schema=SCHEMA)


def test_a_repair_round_changes_the_key() -> None:
    conversation = Conversation(call(), "claude-opus-5")
    before = conversation.key()
    conversation.repair([{"type": "text", "text": "no"}], [{"type": "text", "text": "again"}])
    assert conversation.key() != before
    assert [m["role"] for m in conversation.messages] == ["user", "assistant", "user"]


# --- recordings on disk --------------------------------------------------------------------


def test_a_corrupt_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_text('{"key": "a", "response": {}}\n\n{"key": "b", "resp\n')
    with pytest.raises(ApplicationError) as err:
        parse_recording(path)
    assert err.value.type == "ReplayUnreadable" and err.value.non_retryable
    assert f"{path} is corrupt at line 3" in str(err.value)


def test_a_cut_off_last_line_says_the_recording_was_interrupted(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_text('{"key": "a", "response": {}}\n{"key": "b", "response": {"con')
    with pytest.raises(ApplicationError, match=r"line 2.*interrupted while writing"):
        parse_recording(path)


def test_a_line_that_is_not_an_exchange_is_named(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_text('{"key": "a", "response": {}}\n[1, 2]\n')
    with pytest.raises(ApplicationError, match="line 2: not an exchange"):
        parse_recording(path)
