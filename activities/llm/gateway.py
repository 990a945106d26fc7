"""The model gateway: every agent's model call goes through the ``call_model`` activity.

It asks the Anthropic Messages API for a structured answer (tool use with the contract's
JSON schema), validates it and sends it back for repair when it does not fit, accounts
tokens and cost, enforces the caller's budget, and records or replays exchanges. With a
budget ledger, every round reserves its most from the run's budget before it is sent and
settles with its real usage after (``activities.llm.ledger``), so parallel tasks share one
account. The SDK never retries; Temporal does, with the server's advised delay (see
``activities.llm.errors``).
Agent roles on the same worker call ``ModelGateway.ask`` directly, with the recording their
run's policy names.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from temporalio.exceptions import ApplicationError

from activities.artifacts.store import ArtifactStore
from activities.llm.client import ServiceClient
from activities.llm.errors import CallSite, check_budget, hopeless, spent
from activities.llm.helpers import Helper, helper_calls, helper_turn
from activities.llm.ledger import BudgetLedger, BudgetRefused
from activities.llm.metrics import record_exchange
from activities.llm.output import (
    MAX_ANSWER_BYTES,
    OutputContract,
    Reading,
    Vet,
    repair_turn,
)
from activities.llm.pricing import usage_of
from activities.llm.recording import (
    Recorder,
    Recordings,
    Replay,
    recorded_path,
    refuse_recording,
)
from activities.llm.request import Conversation
from activities.llm.reserve import claim_for
from workflows.catalogue import CALL_MODEL
from workflows.common.canonical import canonical_json
from workflows.contracts.errors import ErrorType
from workflows.contracts.policy import ModelRecording
from workflows.contracts.spend import Budget, ModelAnswer, ModelCall, Usage

log = logging.getLogger("assay.models")

MAX_CACHED_CONTRACTS = 256
LIGHT_ROLES = ("plan_reviewer",)
LIGHT_ROLE_PREFIXES = ("reviewer_",)
"""Roles that judge rather than write: they run on the light model unless set otherwise.
The output processor and the study synthesizer write a run's and a study's final answer, so they
run on the writing (default) tier."""
ROLE_FAMILIES = ("reviewer", "debugger")
"""``reviewer_ops`` falls back to a model set for ``reviewer``, ``debugger_direct`` to
``debugger``'s."""


@dataclass(frozen=True)
class Exchange:
    """One round's response body, its request id and usage; ``replayed`` if recorded."""

    response: dict[str, Any]
    request_id: str | None
    usage: Usage
    replayed: bool = False


@dataclass(frozen=True)
class Source:
    """Where a call's answers come from: a recording to replay, or live (maybe recorded)."""

    replay: Replay | None = None
    recorder: Recorder | None = None


class ModelGateway:
    """Holds the API client (built once from settings) and serves ``call_model``.

    Args:
        api_key: Anthropic API key; None disables live calls (replay still works).
        base_url: Messages API base URL; None means Anthropic's.
        default_models: model per role, with ``"default"`` for roles not listed.
        light_model: model of the light roles (plan reviewer, model reviewers) unless
            ``default_models`` names one for the role.
        record_path: append every live exchange (repair rounds included) to this JSONL file.
        replay_path: answer only from this recording: no key or network needed, a request
            it has no answer for fails (``ReplayMiss``), nothing is recorded again.
        timeout_s: per-request timeout.
        max_answer_bytes: largest structured answer accepted.
        ledger: the run budgets' ledger (open); None enforces only each caller's budget.
    """

    def __init__(self, api_key: SecretStr | None, base_url: str | None,
                 default_models: dict[str, str], *, light_model: str | None = None,
                 record_path: Path | None = None, replay_path: Path | None = None,
                 timeout_s: float = 120.0, max_answer_bytes: int = MAX_ANSWER_BYTES,
                 ledger: BudgetLedger | None = None, store: ArtifactStore | None = None,
                 recordings_dir: Path | None = None) -> None:
        self._ledger = ledger
        self._store = store
        self._recordings_dir = recordings_dir
        self._service = ServiceClient(api_key, base_url, timeout_s)
        self.default_models = dict(default_models)
        self.light_model = light_model
        self._settings_source = Source(
            replay=Replay(replay_path) if replay_path is not None else None,
            recorder=Recorder(record_path) if record_path is not None else None)
        self._recordings = Recordings()
        self._max_answer_bytes = max_answer_bytes
        self._contracts: dict[str, OutputContract] = {}

    async def aclose(self) -> None:
        """Close the HTTP connection pool (the worker calls this on shutdown)."""
        await self._service.aclose()

    def model_for(self, call: ModelCall) -> str:
        """The model ``call`` runs on.

        Its own; else the one set for its role, then for its role's family; else the light
        model for a light role; else ``default``.
        """
        role = call.role
        family = next((f for f in ROLE_FAMILIES if role.startswith(f + "_")), None)
        light = role in LIGHT_ROLES or role.startswith(LIGHT_ROLE_PREFIXES)
        model = (call.model or self.default_models.get(role)
                 or (self.default_models.get(family) if family else None)
                 or (self.light_model if light else None) or self.default_models.get("default"))
        if not model:
            raise ApplicationError(
                f"no model is configured for role {role!r}: set one for the role or a "
                "default model in the agents worker's settings",
                type=ErrorType.MODEL_NOT_CONFIGURED, non_retryable=True)
        return model

    @CALL_MODEL.defn
    async def call_model(self, call: ModelCall) -> ModelAnswer:
        """Ask the model for an answer that fits ``call.output_schema``; repair if needed."""
        return await self.ask(call)

    async def ask(self, call: ModelCall, recording: ModelRecording | None = None, *,
                  vet: Vet | None = None, helper: Helper | None = None) -> ModelAnswer:
        """Ask the model for an answer that fits ``call.output_schema``; repair if needed.

        Args:
            call: the prompt, the contract wanted back, and the caller's budget.
            recording: the run's recording; it replaces the worker's record/replay paths
                (``record`` appends this call's exchanges to it, ``replay`` answers only
                from it).
            vet: the caller's own check of a schema-valid answer; a problem it names is
                sent back for repair like a schema violation.
            helper: tools the model may call before answering (``activities.llm.helpers``),
                answered here at most ``helper.limit`` times.

        Raises:
            ApplicationError: ``BudgetExhausted``, ``InvalidModelOutput``, ``ModelRefused``,
                ``ReplayMiss``, ``ModelNotConfigured``... (non-retryable), or a retryable
                service error (rate limit, overload, 5xx, unreachable).
        """
        started = time.monotonic()
        model = self.model_for(call)
        site = CallSite(call.role, model, call.output_schema_name, self._service.secret)
        contract = self._contract(call)
        source = await self._source(recording)
        conversation = Conversation(call, model, helper.tools if helper else None)
        exchange_id = conversation.key()[:32]
        usage = Usage()
        reading = Reading()
        lookups = 0
        for repairs in range(call.max_repairs + 1):
            check_budget(call.budget, usage, site)
            exchange = await self._reserved(conversation, site, exchange_id,
                                            repairs + lookups, source, usage)
            usage = usage + exchange.usage
            while helper is not None and lookups < helper.limit and (
                    asked := helper_calls(exchange.response, helper)):
                lookups += 1
                turn = await asyncio.to_thread(helper_turn, helper, asked)
                conversation.repair(exchange.response.get("content") or [], turn)
                check_budget(call.budget, usage, site)
                exchange = await self._reserved(conversation, site, exchange_id,
                                                repairs + lookups, source, usage)
                usage = usage + exchange.usage
            reading = contract.read(exchange.response, vet)
            if reading.output is not None:
                log.info("model call %s: %d+%d tokens, $%.5f, %d repairs, %.2fs", site,
                         usage.input_tokens, usage.output_tokens, usage.cost_usd, repairs,
                         time.monotonic() - started)
                return ModelAnswer(
                    output=reading.output, usage=usage, repairs=repairs,
                    model=str(exchange.response.get("model") or model),
                    request_id=exchange.request_id, exchange_id=exchange_id,
                    replayed=exchange.replayed, lookups=lookups)
            if reading.hopeless:
                raise hopeless(reading, site, usage)
            if repairs < call.max_repairs:
                conversation.repair(exchange.response.get("content") or [],
                                    repair_turn(reading))
        raise ApplicationError(
            f"the model's answer for schema {call.output_schema_name!r} ({site}) was still "
            f"invalid after {call.max_repairs} repairs: {reading.problem}", spent(usage),
            type=ErrorType.INVALID_MODEL_OUTPUT, non_retryable=True)

    async def _source(self, recording: ModelRecording | None) -> Source:
        """The run's recording if it names one, else the worker's settings.

        A run names no host path: a replay is fetched from the artifact store by its digest
        into this worker's recordings folder, a record is written there under its name.

        Raises:
            ApplicationError: ``RecordingRefused`` for a recording that names a path, or
                lacks its name or digest, or when this worker has no folder or store for it.
        """
        if recording is None:
            return self._settings_source
        folder = self._recordings_dir
        if recording.path is not None:
            raise refuse_recording(recording, "it names a host path")
        if recording.mode == "replay":
            if recording.sha256 is None:
                raise refuse_recording(recording, "a replay names its recording's sha256")
            if self._store is None or folder is None:
                raise refuse_recording(recording, "this worker has no artifact store")
            path = await self._recordings.fetched(self._store, recording.sha256, folder)
            return Source(replay=self._recordings.replay(path))
        if recording.name is None or folder is None:
            raise refuse_recording(recording, "a record names its recording"
                                   if folder is not None else "this worker has no data folder")
        try:
            path = recorded_path(folder, recording.name)
        except ValueError as err:
            raise refuse_recording(recording, str(err)) from None
        return Source(recorder=self._recordings.recorder(path))

    def _contract(self, call: ModelCall) -> OutputContract:
        """The checks for ``call``'s schema, built once per schema.

        Checking a schema against the JSON Schema meta-schema costs about a millisecond,
        more than the rest of the gateway's work on a call.
        """
        digest = canonical_json([call.output_schema_name, call.output_schema])
        contract = self._contracts.get(digest)
        if contract is None:
            if len(self._contracts) >= MAX_CACHED_CONTRACTS:
                self._contracts.clear()
            contract = OutputContract(call.output_schema_name, call.output_schema,
                                      max_bytes=self._max_answer_bytes)
            self._contracts[digest] = contract
        return contract

    async def _reserved(self, conversation: Conversation, site: CallSite, exchange_id: str,
                        repairs: int, source: Source, usage: Usage) -> Exchange:
        """One round, reserved from the run's ledger first and settled with its usage after."""
        call = conversation.call
        claim = None if self._ledger is None else claim_for(
            call, conversation.request(), exchange_id, repairs)
        if self._ledger is None or claim is None:
            return await self._exchange(conversation, site, exchange_id, repairs, source)
        try:
            await self._ledger.reserve(claim, call.budget or Budget())
        except BudgetRefused as err:
            raise ApplicationError(
                f"model budget exhausted: the run's budget ledger refused the call: {err}; "
                f"not calling the model ({site}). Raise the run's budget or let the task go "
                "on without this agent", spent(usage),
                type=ErrorType.BUDGET_EXHAUSTED, non_retryable=True) from None
        try:
            exchange = await self._exchange(conversation, site, exchange_id, repairs, source)
        except BaseException:
            await asyncio.shield(self._ledger.release(claim.key))
            raise
        await self._ledger.settle(claim.key, exchange.usage)
        return exchange

    async def _exchange(self, conversation: Conversation, site: CallSite, exchange_id: str,
                        repairs: int, source: Source) -> Exchange:
        """One request/response round, from the recording or the live service."""
        key = conversation.key()
        if source.replay is not None:
            exchange = _replayed(source.replay, key, conversation, site)
        else:
            exchange = await self._live(conversation, site, key, exchange_id, repairs,
                                        source.recorder)
        record_exchange(site.role, site.model, exchange.usage, replayed=exchange.replayed)
        return exchange

    async def _live(self, conversation: Conversation, site: CallSite, key: str,
                    exchange_id: str, repairs: int, recorder: Recorder | None) -> Exchange:
        request = conversation.request()
        response, request_id = await self._service.send(request, site)
        usage = usage_of(response, site.model)
        if recorder is not None:
            call = conversation.call
            await recorder.append({
                "key": key, "exchange_id": exchange_id, "round": repairs,
                "run_id": call.run_id, "task_id": call.task_id, "role": call.role,
                "schema": call.output_schema_name, "request": request, "response": response,
                "request_id": request_id, "usage": usage.model_dump(mode="json")})
        return Exchange(response, request_id, usage)


def _replayed(replay: Replay, key: str, conversation: Conversation, site: CallSite) -> Exchange:
    entry = replay.lookup(key)
    if entry is None:
        raise ApplicationError(
            f"the recording {replay.path} has no answer for this request ({site}); "
            f"last user message: {conversation.last_user_text()[:200]!r}. The "
            "prompt, plan or model differs from the recorded run; record it again",
            type=ErrorType.REPLAY_MISS, non_retryable=True)
    request_id = entry.get("request_id")
    return Exchange(entry["response"], request_id if isinstance(request_id, str) else None,
                    Usage.model_validate(entry.get("usage") or {}), replayed=True)
