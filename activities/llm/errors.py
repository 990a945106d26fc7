"""How the model service's failures become Temporal activity errors.

The SDK never retries (``max_retries=0``): Temporal does. So every SDK exception is turned
into an ``ApplicationError`` that says whether a retry can help. Rate limits, overload,
server errors and unreachable servers are retryable, with the server's advised delay
(``retry-after``) as the next retry delay; requests the service refused (bad request, bad
key, no permission, unknown model) are permanent. Messages never include the API key.
"""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import anthropic
from temporalio.exceptions import ApplicationError

from activities.llm.output import Reading
from workflows.contracts.errors import ErrorType
from workflows.contracts.spend import Budget, Usage

MAX_ADVISED_DELAY_S = 3600.0
"""A longer ``retry-after`` is capped: a run should not sleep for days on one header."""


@dataclass(frozen=True)
class CallSite:
    """Which call failed, for messages: role, model and schema (never the prompt or key)."""

    role: str
    model: str
    schema: str
    secret: str | None = None

    def __str__(self) -> str:
        return f"role {self.role!r}, model {self.model!r}, schema {self.schema!r}"

    def scrub(self, text: str) -> str:
        """``text`` with the API key blanked out, should a server ever echo it."""
        return text.replace(self.secret, "[api key]") if self.secret else text


def advised_delay(headers: dict[str, str] | None) -> timedelta | None:
    """The delay a response advises, or None when it advises none.

    ``retry-after-ms`` wins; else ``retry-after`` in seconds or as an HTTP date.
    """
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    seconds: float | None = None
    if (ms := lowered.get("retry-after-ms")) is not None:
        seconds = _number(ms, scale=0.001)
    if seconds is None and (value := lowered.get("retry-after")) is not None:
        seconds = _number(value)
        if seconds is None and (date := email.utils.parsedate_tz(value)) is not None:
            seconds = email.utils.mktime_tz(date) - time.time()
    if seconds is None or seconds <= 0:
        return None
    return timedelta(seconds=min(seconds, MAX_ADVISED_DELAY_S))


def _number(text: str, *, scale: float = 1.0) -> float | None:
    try:
        return float(text) * scale
    except ValueError:
        return None


_RETRYABLE: dict[type[anthropic.APIStatusError], tuple[str, str]] = {
    anthropic.RateLimitError: ("ModelRateLimited", "rate-limited the call"),
    anthropic.OverloadedError: ("ModelOverloaded", "is overloaded"),
    anthropic.RequestTimeoutError: ("ModelUnreachable", "timed out receiving the request"),
    anthropic.ConflictError: ("ModelServerError", "reported a conflict"),
}

_PERMANENT_HINTS: dict[int, str] = {
    400: "the request is invalid; check the model name, max_tokens and the output schema",
    401: ("the API key is missing, wrong or revoked; set ASSAY_ANTHROPIC_API_KEY for the "
          "agents worker"),
    402: "the account cannot pay for this call; check its billing",
    403: "the API key may not use this model or feature",
    404: "the model does not exist or this key cannot see it; set another model for the role",
    413: "the request is too large; shorten the prompt",
    422: "the service could not process the request; check the prompt and the schema",
}


def model_error(err: Exception, site: CallSite) -> ApplicationError:
    """The activity error for an SDK exception (or a malformed response) at ``site``."""
    if isinstance(err, anthropic.APITimeoutError):
        return ApplicationError(f"the model service did not answer in time ({site})",
                                type=ErrorType.MODEL_UNREACHABLE)
    if isinstance(err, anthropic.APIConnectionError):
        return ApplicationError(f"cannot reach the model service ({site}): {err.message}",
                                type=ErrorType.MODEL_UNREACHABLE)
    if isinstance(err, anthropic.APIStatusError):
        return _status_error(err, site)
    return ApplicationError(
        f"the model service sent a malformed response ({site}): {site.scrub(str(err))[:300]}",
        type=ErrorType.MODEL_SERVER_ERROR)


def _status_error(err: anthropic.APIStatusError, site: CallSite) -> ApplicationError:
    status = err.status_code
    said = site.scrub(err.api_message or err.message)[:500]
    request = f"; request id {err.request_id}" if err.request_id else ""
    delay = advised_delay(dict(err.response.headers))
    kind = next((v for cls, v in _RETRYABLE.items() if isinstance(err, cls)), None)
    if kind is None and status >= 500:
        kind = ("ModelServerError", "failed")
    if kind is not None:
        after = f"; retrying after {delay.total_seconds():g}s as advised" if delay else ""
        return ApplicationError(
            f"the model service {kind[1]} (HTTP {status}) for {site}: {said}{request}{after}",
            {"status": status}, type=kind[0], next_retry_delay=delay)
    hint = _PERMANENT_HINTS.get(status, "the service refused the request")
    return ApplicationError(
        f"the model service refused the call (HTTP {status}) for {site}: {said}{request}. "
        f"{hint[0].upper()}{hint[1:]}.",
        {"status": status}, type=ErrorType.MODEL_REJECTED_REQUEST, non_retryable=True)


def check_budget(budget: Budget | None, spent_here: Usage, site: CallSite) -> None:
    """Refuse to start a round once the caller's budget (plus this call so far) is spent."""
    reason = budget.exhausted_by(spent_here) if budget is not None else None
    if reason:
        raise ApplicationError(
            f"model budget exhausted: {reason}; not calling the model ({site}). Raise the "
            "budget or let the task go on without this agent", spent(spent_here),
            type=ErrorType.BUDGET_EXHAUSTED, non_retryable=True)


def hopeless(reading: Reading, site: CallSite, usage: Usage) -> ApplicationError:
    """The error for an answer no repair can help (cut off, or refused)."""
    refused = not reading.problem
    return ApplicationError(
        f"{reading.hopeless} ({site}){': ' + reading.problem if reading.problem else ''}",
        spent(usage), type=ErrorType.MODEL_REFUSED if refused else "InvalidModelOutput",
        non_retryable=True)


def spent(usage: Usage) -> dict[str, Any]:
    """Error details with what a failed call spent (``err.details[0]["usage"]``).

    The caller charges its budget with it even though no answer came back.
    """
    return {"usage": usage.model_dump(mode="json")}
