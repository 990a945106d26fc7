"""Per-exchange model metrics, exported with the worker's own (Prometheus) metrics.

Every request the gateway sends or replays adds to counters labelled by role, model and
source (``live`` or ``replay``, so a dashboard summing spend can leave replays out). The
SDK's counters hold integers, so cost is a float histogram: its ``_sum`` series is the
dollars spent and grows like a counter. Outside an activity (a plain ``ask`` in a test or a
script) nothing is recorded.
"""

from __future__ import annotations

from temporalio import activity

from workflows.contracts.spend import Usage

CALLS = "assay_model_calls"
INPUT_TOKENS = "assay_model_input_tokens"
OUTPUT_TOKENS = "assay_model_output_tokens"
CACHE_READ_TOKENS = "assay_model_cache_read_tokens"
CACHE_WRITE_TOKENS = "assay_model_cache_write_tokens"
COST_USD = "assay_model_cost_usd"
COST_BUCKETS_USD = (0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0)
"""Bucket bounds of the cost histogram (the runtime's defaults suit milliseconds)."""


def record_exchange(role: str, model: str, usage: Usage, *, replayed: bool) -> None:
    """Count one request/response round of ``role`` on ``model`` and what it used."""
    if not activity.in_activity():
        return
    meter = activity.metric_meter().with_additional_attributes(
        {"role": role, "model": model, "source": "replay" if replayed else "live"})
    counts = {
        CALLS: ("Model requests sent or replayed, repair rounds included", "requests", 1),
        INPUT_TOKENS: ("Fresh input tokens", "tokens", usage.input_tokens),
        OUTPUT_TOKENS: ("Output tokens", "tokens", usage.output_tokens),
        CACHE_READ_TOKENS: ("Input tokens read from the prompt cache", "tokens",
                            usage.cache_read_input_tokens),
        CACHE_WRITE_TOKENS: ("Input tokens written to the prompt cache", "tokens",
                             usage.cache_creation_input_tokens),
    }
    for name, (description, unit, value) in counts.items():
        meter.create_counter(name, description, unit).add(value)
    meter.create_histogram_float(
        COST_USD, "Cost of each model request at list prices (its sum is dollars spent)",
        "USD").record(usage.cost_usd)
