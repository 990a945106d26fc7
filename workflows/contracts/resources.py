"""Resource estimates with the GPU-hour formula's shape, and their calibration from actuals.

The seed estimates GPU hours from a baseline (1 B parameters, 1 000 samples, batch 32: one
hour) scaled by the model's size, the samples and the batch, plus a 20 % buffer
(:func:`estimate_gpu_hours`). A machine without GPUs estimates CPU-seconds and memory with
the same shape from a baseline per task kind (:class:`KindBaseline`): time scales with
parameters, samples and 32 / batch; memory with parameters and batch (not samples). After
a cycle, :func:`recalibrate` moves a kind's baseline by the ratio of actual to estimated
time its tasks showed ("estimated 2 h, actual 45 min": the baseline shrinks to 0.375 of
itself).

A study calibrates the plan's own time estimates the same way (:class:`Calibration`): after
each cycle, :func:`recalibrated` moves each task kind's factor (actual ÷ estimated) toward
the ratio its completed tasks showed, smoothed by :data:`SMOOTHING` and kept within
:data:`FACTOR_BOUNDS`, and records the kind's estimation accuracy
(``1 - |actual - estimated| / estimated``, target :data:`~workflows.contracts.kpis.
ESTIMATION_TARGET`, 70 %) of the plan's estimates and of the calibrated ones
(:func:`calibrated_seconds`: the estimate times the factor). The next cycle's planner is
shown each kind's factor and accuracy and each estimate with its calibrated value. Pure
functions: intake, reports and studies share them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from workflows.contracts.base import Model
from workflows.contracts.kpis import accuracy, estimated_seconds

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
    ratios = _ratios(pairs)
    if not ratios:
        return baseline
    factor = sum(ratios) / len(ratios)
    return baseline.model_copy(update={
        "cpu_s": baseline.cpu_s * factor,
        "calibrated_from": baseline.calibrated_from + len(ratios)})


def _ratios(pairs: list[tuple[float, float]]) -> list[float]:
    """``actual / estimated`` of each pair with a positive estimate."""
    return [actual / estimated for estimated, actual in pairs if estimated > 0]


SMOOTHING = 0.5
"""The weight of a cycle's ratio in a kind's factor: half the newest cycle, half the factor
before it (the first cycle's ratio is taken whole)."""
FACTOR_BOUNDS = (0.05, 20.0)
"""The least and most a factor may be: one wild task does not make estimates absurd."""
MAX_KINDS = 20
"""Task kinds a study keeps a calibration of (the most recently seen)."""


class Calibration(Model):
    """How one task kind's time estimates compare with its actuals, across a study's cycles."""

    kind: str
    factor: float = Field(default=1.0, gt=0)
    """Actual ÷ estimated, smoothed: what the plan's next estimates of the kind are
    multiplied by."""
    tasks: int = 0
    """How many tasks' actuals moved it."""
    accuracy: float | None = None
    """The mean accuracy of the plan's estimates of the kind in the last cycle that had
    some."""
    calibrated_accuracy: float | None = None
    """The mean accuracy the calibrated estimates (the factor before that cycle applied)
    reached in that cycle (None: the kind was not calibrated yet)."""


def calibrated_seconds(estimated_s: float, calibration: Calibration | None) -> float:
    """An estimate of a kind with its calibration applied (none: the estimate as it is)."""
    return estimated_s * (calibration.factor if calibration else 1.0)


def calibration_update(current: Calibration | None, kind: str,
                       pairs: list[tuple[float, float]]) -> Calibration | None:
    """A kind's calibration after a cycle's ``(estimated_s, actual_s)`` pairs of its tasks.

    "Estimated 2 h, actual 45 min" moves a new kind's factor to 0.375 (accuracy 37.5 %); a
    later "estimated 2 h, actual 1 h" to ``0.5 * 0.375 + 0.5 * 0.5`` = 0.4375, its calibrated
    estimate (45 min) having been 66.7 % accurate. Pairs without a positive estimate are left
    out; with none the calibration stays as it was (None: none yet).
    """
    usable = [(e, a) for e, a in pairs if e > 0]
    if not usable:
        return current
    ratio = sum(_ratios(usable)) / len(usable)
    moved = ratio if current is None else (1 - SMOOTHING) * current.factor + SMOOTHING * ratio
    low, high = FACTOR_BOUNDS
    return Calibration(
        kind=kind, factor=round(min(high, max(low, moved)), 4),
        tasks=(current.tasks if current else 0) + len(usable),
        accuracy=_mean([accuracy(e, a) for e, a in usable]),
        calibrated_accuracy=None if current is None else _mean(
            [accuracy(calibrated_seconds(e, current), a) for e, a in usable]))


def recalibrated(calibrations: dict[str, Calibration],
                 pairs: dict[str, list[tuple[float, float]]]) -> dict[str, Calibration]:
    """Every kind's calibration after a cycle's pairs by kind, at most :data:`MAX_KINDS`.

    The kinds this cycle saw are kept first, then the others in their order.
    """
    moved = {kind: c for kind, found in pairs.items()
             if (c := calibration_update(calibrations.get(kind), kind, found)) is not None}
    kept = {**moved, **{k: c for k, c in calibrations.items() if k not in moved}}
    return dict(list(kept.items())[:MAX_KINDS])


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4)


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
