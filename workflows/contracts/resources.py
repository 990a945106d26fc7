"""Resource estimates with the GPU-hour formula's shape, and their calibration from actuals.

The seed estimates GPU hours from a baseline (1 B parameters, 1 000 samples, batch 32: one
hour) scaled by the model's size, the samples and the batch, plus a 20 % buffer
(:func:`estimate_gpu_hours`). A machine without GPUs estimates CPU-seconds and memory with
the same shape from a baseline per task kind (:class:`KindBaseline`): time scales with
parameters, samples and 32 / batch; memory with parameters and batch (not samples). After
a cycle, :func:`recalibrate` moves a kind's baseline by the ratio of actual to estimated
time its tasks showed ("estimated 2 h, actual 45 min": the baseline shrinks to 0.375 of
itself). Pure functions: intake, reports and studies share them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from workflows.contracts.base import Model
from workflows.contracts.kpis import estimated_seconds

BUFFER = 1.2
"""The 20 % overhead on every estimate."""
BASE_PARAMS, BASE_SAMPLES, BASE_BATCH = 1e9, 1000, 32


def estimate_gpu_hours(model_params: float, num_samples: float, batch_size: float) -> float:
    """The GPU-hour estimate: ``1 h * params/1e9 * samples/1000 * 32/batch * 1.2``.

    Raises:
        ValueError: a batch size that is not positive.
    """
    return 1.0 * _scale(model_params, num_samples, batch_size) * BUFFER


class KindBaseline(Model):
    """What one task of a kind takes at the formula's baseline size, on this machine's CPUs."""

    kind: str
    cpu_s: float = Field(gt=0)
    memory_mb: float = Field(gt=0)
    calibrated_from: int = 0
    """How many tasks' actuals moved it (0: not yet calibrated)."""


class CpuEstimate(Model):
    """A task's estimated CPU-seconds and peak memory, buffer included."""

    kind: str
    cpu_s: float
    memory_mb: float


def estimate_cpu(baseline: KindBaseline, model_params: float, num_samples: float,
                 batch_size: float) -> CpuEstimate:
    """CPU-seconds and memory with the GPU-hour formula's shape, from the kind's baseline.

    Raises:
        ValueError: a batch size that is not positive.
    """
    time = baseline.cpu_s * _scale(model_params, num_samples, batch_size) * BUFFER
    memory = baseline.memory_mb * (model_params / BASE_PARAMS) * (batch_size / BASE_BATCH)
    return CpuEstimate(kind=baseline.kind, cpu_s=time, memory_mb=memory * BUFFER)


def recalibrate(baseline: KindBaseline, pairs: list[tuple[float, float]]) -> KindBaseline:
    """The baseline moved by its tasks' mean ratio of actual to estimated time.

    ``pairs`` are ``(estimated_s, actual_s)`` of this kind's tasks in the cycle; those with
    no positive estimate are left out, and with none the baseline stays as it was.
    """
    ratios = [actual / estimated for estimated, actual in pairs if estimated > 0]
    if not ratios:
        return baseline
    factor = sum(ratios) / len(ratios)
    return baseline.model_copy(update={
        "cpu_s": baseline.cpu_s * factor,
        "calibrated_from": baseline.calibrated_from + len(ratios)})


FACTORS = ("model_params", "num_samples", "batch_size")
"""The keys of ``estimated_resources`` the GPU-hour formula reads."""


def with_gpu_hours(estimate: dict[str, Any] | None) -> dict[str, Any] | None:
    """``estimate`` with the formula's ``gpu_hours`` added where the formula applies.

    It applies when the estimate gives the formula's factors (positive numbers) and no time
    of its own; otherwise ``estimate`` comes back unchanged.
    """
    if not estimate or estimated_seconds(estimate) is not None:
        return estimate
    values = [estimate.get(key) for key in FACTORS]
    numbers = [float(v) for v in values
               if isinstance(v, int | float) and not isinstance(v, bool) and v > 0]
    if len(numbers) != len(FACTORS):
        return estimate
    return {**estimate, "gpu_hours": round(estimate_gpu_hours(*numbers), 4)}


def _scale(model_params: float, num_samples: float, batch_size: float) -> float:
    if batch_size <= 0:
        raise ValueError(f"a batch size must be positive, not {batch_size}")
    return (model_params / BASE_PARAMS) * (num_samples / BASE_SAMPLES) * (BASE_BATCH / batch_size)
