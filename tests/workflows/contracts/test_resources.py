"""Resource estimates at the documented example's numbers, and their calibration from actuals."""

from __future__ import annotations

import pytest

from workflows.contracts.kpis import ESTIMATION_TARGET
from workflows.contracts.resources import (
    BUFFER,
    FACTOR_BOUNDS,
    MAX_KINDS,
    SMOOTHING,
    Calibration,
    KindBaseline,
    calibrated_seconds,
    calibration_update,
    estimate_cpu,
    estimate_gpu_hours,
    recalibrate,
    recalibrated,
    with_gpu_hours,
)


def test_the_seeds_two_clip_examples() -> None:
    assert BUFFER == 1.2
    assert estimate_gpu_hours(150e6, 500, 32) == pytest.approx(0.09)  # 5.4 min
    assert estimate_gpu_hours(430e6, 500, 16) == pytest.approx(0.516)  # 0.52 GPU hours
    assert estimate_gpu_hours(1e9, 1000, 32) == pytest.approx(1.2)  # the baseline, buffered
    with pytest.raises(ValueError, match="batch size"):
        estimate_gpu_hours(1e9, 1000, 0)


def test_cpu_estimates_keep_the_shape_per_kind() -> None:
    fit = KindBaseline(kind="fit-model", cpu_s=100.0, memory_mb=500.0)
    at_base = estimate_cpu(fit, 1e9, 1000, 32)
    assert (at_base.cpu_s, at_base.memory_mb) == pytest.approx((120.0, 600.0))
    half_batch = estimate_cpu(fit, 430e6, 500, 16)
    assert half_batch.cpu_s == pytest.approx(100 * 0.43 * 0.5 * 2 * 1.2)
    assert half_batch.memory_mb == pytest.approx(500 * 0.43 * 0.5 * 1.2)  # not by samples
    assert half_batch.kind == "fit-model"


def test_estimated_2_h_actual_45_min_updates_the_baseline() -> None:
    fit = KindBaseline(kind="fit", cpu_s=7200.0, memory_mb=100.0)
    moved = recalibrate(fit, [(7200.0, 2700.0)])
    assert moved.cpu_s == pytest.approx(2700.0)
    assert (moved.memory_mb, moved.calibrated_from) == (100.0, 1)
    assert recalibrate(fit, [(0.0, 5.0)]) == fit
    both = recalibrate(fit, [(100.0, 50.0), (100.0, 150.0)])
    assert both.cpu_s == pytest.approx(7200.0) and both.calibrated_from == 2


def test_an_estimate_with_the_factors_and_no_time_gets_the_seeds_gpu_hours() -> None:
    given = {"model_params": 430e6, "num_samples": 500, "batch_size": 16}
    assert with_gpu_hours(given) == {**given, "gpu_hours": 0.516}
    timed = {**given, "minutes": 30}
    assert with_gpu_hours(timed) is timed
    assert with_gpu_hours({**given, "batch_size": 0}) == {**given, "batch_size": 0}
    assert with_gpu_hours(None) is None


HOUR, MIN45 = 3600.0, 2700.0


def test_estimated_2_h_actual_45_min_calibrates_the_kind_to_0_375() -> None:
    first = calibration_update(None, "fit-model", [(2 * HOUR, MIN45)])
    assert first == Calibration(kind="fit-model", factor=0.375, tasks=1, accuracy=0.375,
                                calibrated_accuracy=None)
    assert calibrated_seconds(2 * HOUR, first) == MIN45  # the next 2 h estimate: 45 min
    assert calibrated_seconds(2 * HOUR, None) == 2 * HOUR


def test_a_later_cycle_moves_the_factor_halfway_and_measures_the_calibrated_estimate() -> None:
    first = calibration_update(None, "fit-model", [(2 * HOUR, MIN45)])
    second = calibration_update(first, "fit-model", [(2 * HOUR, HOUR)])
    assert SMOOTHING == 0.5
    assert second is not None
    assert (second.factor, second.tasks) == (0.4375, 2)  # 0.5 * 0.375 + 0.5 * 0.5
    assert second.accuracy == 0.5  # the plan's 2 h against 1 h
    assert second.calibrated_accuracy == 0.6667  # 45 min against 1 h: above the plan's
    assert ESTIMATION_TARGET == 0.70


def test_a_calibration_ignores_pairs_without_an_estimate_and_stays_within_bounds() -> None:
    assert calibration_update(None, "k", [(0.0, 10.0)]) is None
    kept = Calibration(kind="k", factor=2.0, tasks=3)
    assert calibration_update(kept, "k", []) is kept
    wild = calibration_update(None, "k", [(1.0, 1000.0)])
    assert wild is not None and wild.factor == FACTOR_BOUNDS[1]


def test_recalibrated_moves_the_kinds_a_cycle_saw_and_keeps_the_others() -> None:
    before = {"plot": Calibration(kind="plot", factor=1.5, tasks=2)}
    after = recalibrated(before, {"fit-model": [(2 * HOUR, MIN45), (HOUR, HOUR)]})
    assert list(after) == ["fit-model", "plot"]
    assert after["fit-model"].factor == 0.6875  # the mean of 0.375 and 1.0
    assert after["plot"] is before["plot"]
    many = recalibrated({}, {f"k{n}": [(1.0, 1.0)] for n in range(MAX_KINDS + 5)})
    assert len(many) == MAX_KINDS
