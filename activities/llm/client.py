"""The Messages API client of one agents worker: built on first use, never retrying.

Temporal owns retries (see ``models_errors``), so the SDK's are off; every SDK failure
becomes an ``ApplicationError`` that says whether a retry can help.
"""

from __future__ import annotations

from typing import Any

import anthropic
from pydantic import SecretStr
from temporalio.exceptions import ApplicationError

from activities.llm.errors import CallSite, model_error
from activities.llm.output import as_object
from workflows.contracts.errors import ErrorType

DEFAULT_BASE_URL = "https://api.anthropic.com"


class ServiceClient:
    """Sends Messages API requests with one pooled HTTP client.

    Args:
        api_key: Anthropic API key; None makes every send fail as ``ModelNotConfigured``.
        base_url: Messages API base URL; None means Anthropic's.
        timeout_s: per-request timeout.
    """

    def __init__(self, api_key: SecretStr | None, base_url: str | None,
                 timeout_s: float) -> None:
        self.api_key = api_key
        self._base_url = base_url or DEFAULT_BASE_URL
        self._timeout_s = timeout_s
        self._client: anthropic.AsyncAnthropic | None = None

    @property
    def secret(self) -> str | None:
        """The key itself, for scrubbing it out of messages."""
        return self.api_key.get_secret_value() if self.api_key else None

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def send(self, request: dict[str, Any], site: CallSite,
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
        if self.api_key is None:
            raise ApplicationError(
                f"no Anthropic API key is configured, so the model cannot be called ({site}): "
                "set ASSAY_ANTHROPIC_API_KEY for the agents worker, or replay a recording "
                "with ASSAY_MODEL_REPLAY_PATH", type=ErrorType.MODEL_NOT_CONFIGURED,
                non_retryable=True)
        if self._client is None:
            self._client = anthropic.AsyncAnthropic(
                api_key=self.api_key.get_secret_value(), base_url=self._base_url,
                max_retries=0, timeout=self._timeout_s)
        return self._client
