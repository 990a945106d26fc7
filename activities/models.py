"""The model gateway: every agent's model call goes through the ``call_model`` activity.

It asks the Anthropic Messages API for a structured answer (tool use with the contract's
JSON schema), validates it and sends it back for repair when it does not fit, accounts
tokens and cost, enforces the caller's budget, and records or replays exchanges. The SDK
never retries; Temporal does, with the server's advised delay (see ``models_errors``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
from pydantic import SecretStr
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.models_errors import CallSite, model_error
from activities.models_output import (
    MAX_ANSWER_BYTES,
    OutputContract,
    Reading,
    as_object,
    repair_turn,
)
from activities.models_pricing import priced
from activities.models_record import Recorder, Replay, canonical
from activities.models_request import Conversation
from workflows.agents import CALL_MODEL, ModelAnswer, ModelCall, Usage

log = logging.getLogger("assay.models")

DEFAULT_BASE_URL = "https://api.anthropic.com"
MAX_CACHED_CONTRACTS = 256


@dataclass(frozen=True)
class Exchange:
    """One round's response body, its request id and usage; ``replayed`` if recorded."""

    response: dict[str, Any]
    request_id: str | None
    usage: Usage
    replayed: bool = False


class ModelGateway:
    """Holds the API client (built once from settings) and serves ``call_model``.

    Args:
        api_key: Anthropic API key; None disables live calls (replay still works).
        base_url: Messages API base URL; None means Anthropic's.
        default_models: model per role, with ``"default"`` for roles not listed.
        record_path: append every live exchange (repair rounds included) to this JSONL file.
        replay_path: answer only from this recording: no key or network needed, a request
            it has no answer for fails (``ReplayMiss``), nothing is recorded again.
        timeout_s: per-request timeout.
        max_answer_bytes: largest structured answer accepted.
    """

    def __init__(self, api_key: SecretStr | None, base_url: str | None,
                 default_models: dict[str, str], *, record_path: Path | None = None,
                 replay_path: Path | None = None, timeout_s: float = 120.0,
                 max_answer_bytes: int = MAX_ANSWER_BYTES) -> None:
        self._api_key = api_key
        self._base_url = base_url or DEFAULT_BASE_URL
        self.default_models = dict(default_models)
        self._recorder = Recorder(record_path) if record_path is not None else None
        self._replay = Replay(replay_path) if replay_path is not None else None
        self._timeout_s = timeout_s
        self._max_answer_bytes = max_answer_bytes
        self._client: anthropic.AsyncAnthropic | None = None
        self._contracts: dict[str, OutputContract] = {}

    async def aclose(self) -> None:
        """Close the HTTP connection pool (the worker calls this on shutdown)."""
        if self._client is not None:
            await self._client.close()
            self._client = None

    def model_for(self, call: ModelCall) -> str:
        """The model ``call`` runs on: its own, else its role's default, else ``default``."""
        model = call.model or self.default_models.get(call.role) or self.default_models.get(
            "default")
        if not model:
            raise ApplicationError(
                f"no model is configured for role {call.role!r}: set one for the role or a "
                "default model in the agents worker's settings", type="ModelNotConfigured",
                non_retryable=True)
        return model

    @activity.defn(name=CALL_MODEL)
    async def call_model(self, call: ModelCall) -> ModelAnswer:
        """Ask the model for an answer that fits ``call.output_schema``; repair if needed."""
        started = time.monotonic()
        model = self.model_for(call)
        secret = self._api_key.get_secret_value() if self._api_key else None
        site = CallSite(call.role, model, call.output_schema_name, secret)
        contract = self._contract(call)
        conversation = Conversation(call, model)
        exchange_id = conversation.key()[:32]
        usage = Usage()
        reading = Reading()
        for repairs in range(call.max_repairs + 1):
            _check_budget(call, usage, site)
            exchange = await self._exchange(conversation, site, exchange_id, repairs)
            usage = usage + exchange.usage
            reading = contract.read(exchange.response)
            if reading.output is not None:
                log.info("model call %s: %d+%d tokens, $%.5f, %d repairs, %.2fs", site,
                         usage.input_tokens, usage.output_tokens, usage.cost_usd, repairs,
                         time.monotonic() - started)
                return ModelAnswer(
                    output=reading.output, usage=usage, repairs=repairs,
                    model=str(exchange.response.get("model") or model),
                    request_id=exchange.request_id, exchange_id=exchange_id,
                    replayed=exchange.replayed)
            if reading.hopeless:
                raise _hopeless(reading, site, usage)
            if repairs < call.max_repairs:
                conversation.repair(exchange.response.get("content") or [],
                                    repair_turn(reading))
        raise ApplicationError(
            f"the model's answer for schema {call.output_schema_name!r} ({site}) was still "
            f"invalid after {call.max_repairs} repairs: {reading.problem}", _spent(usage),
            type="InvalidModelOutput", non_retryable=True)

    def _contract(self, call: ModelCall) -> OutputContract:
        """The checks for ``call``'s schema, built once per schema.

        Checking a schema against the JSON Schema meta-schema costs about a millisecond,
        more than the rest of the gateway's work on a call.
        """
        digest = canonical([call.output_schema_name, call.output_schema])
        contract = self._contracts.get(digest)
        if contract is None:
            if len(self._contracts) >= MAX_CACHED_CONTRACTS:
                self._contracts.clear()
            contract = OutputContract(call.output_schema_name, call.output_schema,
                                      max_bytes=self._max_answer_bytes)
            self._contracts[digest] = contract
        return contract

    async def _exchange(self, conversation: Conversation, site: CallSite, exchange_id: str,
                        repairs: int) -> Exchange:
        """One request/response round, from the recording or the live service."""
        key = conversation.key()
        if self._replay is not None:
            return self._replayed(key, conversation, site)
        request = conversation.request()
        response, request_id = await self._send(request, site)
        usage = _usage(response, site.model)
        if self._recorder is not None:
            call = conversation.call
            await self._recorder.append({
                "key": key, "exchange_id": exchange_id, "round": repairs,
                "run_id": call.run_id, "task_id": call.task_id, "role": call.role,
                "schema": call.output_schema_name, "request": request, "response": response,
                "request_id": request_id, "usage": usage.model_dump(mode="json")})
        return Exchange(response, request_id, usage)

    def _replayed(self, key: str, conversation: Conversation, site: CallSite) -> Exchange:
        assert self._replay is not None
        entry = self._replay.lookup(key)
        if entry is None:
            raise ApplicationError(
                f"the recording {self._replay.path} has no answer for this request ({site}); "
                f"last user message: {_last_user_text(conversation.messages)[:200]!r}. The "
                "prompt, plan or model differs from the recorded run; record it again",
                type="ReplayMiss", non_retryable=True)
        request_id = entry.get("request_id")
        return Exchange(entry["response"], request_id if isinstance(request_id, str) else None,
                        Usage.model_validate(entry.get("usage") or {}), replayed=True)

    async def _send(self, request: dict[str, Any], site: CallSite,
                    ) -> tuple[dict[str, Any], str | None]:
        """POST the request; the response body as JSON, and its request id."""
        client = self._client_for(site)
        try:
            raw = await client.messages.with_raw_response.create(
                model=request["model"], max_tokens=request["max_tokens"],
                system=request["system"], messages=request["messages"],
                tools=request["tools"], tool_choice=request["tool_choice"])
        except anthropic.APIError as err:
            raise model_error(err, site) from None
        try:
            body = as_object(raw.http_response.json())
        except ValueError as err:
            raise model_error(err, site) from None
        if body is None:
            raise model_error(ValueError("the response body is not a JSON object"), site)
        return body, raw.request_id

    def _client_for(self, site: CallSite) -> anthropic.AsyncAnthropic:
        if self._api_key is None:
            raise ApplicationError(
                f"no Anthropic API key is configured, so the model cannot be called ({site}): "
                "set ASSAY_ANTHROPIC_API_KEY for the agents worker, or replay a recording "
                "with ASSAY_MODEL_REPLAY_PATH", type="ModelNotConfigured", non_retryable=True)
        if self._client is None:
            self._client = anthropic.AsyncAnthropic(
                api_key=self._api_key.get_secret_value(), base_url=self._base_url,
                max_retries=0, timeout=self._timeout_s)
        return self._client


def _check_budget(call: ModelCall, spent_here: Usage, site: CallSite) -> None:
    """Refuse to start a round once the caller's budget (plus this call so far) is spent."""
    reason = call.budget.exhausted_by(spent_here) if call.budget is not None else None
    if reason:
        raise ApplicationError(
            f"model budget exhausted: {reason}; not calling the model ({site}). Raise the "
            "budget or let the task go on without this agent", _spent(spent_here),
            type="BudgetExhausted", non_retryable=True)


def _hopeless(reading: Reading, site: CallSite, usage: Usage) -> ApplicationError:
    refused = not reading.problem
    return ApplicationError(
        f"{reading.hopeless} ({site}){': ' + reading.problem if reading.problem else ''}",
        _spent(usage), type="ModelRefused" if refused else "InvalidModelOutput",
        non_retryable=True)


def _spent(usage: Usage) -> dict[str, Any]:
    """Error details with what a failed call spent (``err.details[0]["usage"]``).

    The caller charges its budget with it even though no answer came back.
    """
    return {"usage": usage.model_dump(mode="json")}


def _usage(response: dict[str, Any], model: str) -> Usage:
    """Tokens from a response's usage block, priced for the model that answered."""
    counts = as_object(response.get("usage")) or {}

    def tokens(name: str) -> int:
        value = counts.get(name)
        return value if isinstance(value, int) else 0

    answered = response.get("model")
    return priced(answered if isinstance(answered, str) else model, tokens("input_tokens"),
                  tokens("output_tokens"), tokens("cache_creation_input_tokens"),
                  tokens("cache_read_input_tokens"))


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    """The text of the last user turn (tool results included), to name a missed request."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content: Any = message.get("content")
        if isinstance(content, str):
            return content
        blocks = [as_object(b) or {} for b in content]
        return " ".join(str(b.get("text") or b.get("content") or "") for b in blocks)
    return ""
