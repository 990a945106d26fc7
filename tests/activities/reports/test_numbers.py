"""How the report prints numbers: four significant digits, integers and flags unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from activities.reports.numbers import byte_size, duration, number, value


@pytest.mark.parametrize(("raw", "shown"), [
    (0.0001999600079984003, "0.0002"),
    (3.14159265, "3.142"),
    (5.0, "5"),
    (-0.000123456, "-0.0001235"),
    (1.23456e-7, "1.235e-07"),
    (1234567.89, "1.235e+06"),
    (24, "24"),
    (123456789, "123456789"),
    (float("nan"), "nan"),
])
def test_numbers_have_four_significant_digits_and_integers_stay_whole(
        raw: float, shown: str) -> None:
    assert number(raw) == shown


@pytest.mark.parametrize(("raw", "shown"), [
    (True, "true"),
    ("welch", "'welch'"),
    ({"a": 5.012345, "b": [1, 6.20001]}, "{a: 5.012, b: [1, 6.2]}"),
    (None, "None"),
])
def test_values_format_every_number_inside_them(raw: Any, shown: str) -> None:
    assert value(raw) == shown


@pytest.mark.parametrize(("seconds", "shown"), [
    (0.123, "0.12 s"), (12.345, "12.3 s"), (61, "1 min 01 s"), (3725, "1 h 02 min"),
])
def test_durations_read_in_the_unit_that_fits(seconds: float, shown: str) -> None:
    assert duration(seconds) == shown


def test_byte_counts_read_in_binary_units() -> None:
    assert [byte_size(n) for n in (0, 812, 1024, 4200, 3_400_000, 2**40, 10**30)] == [
        "0 B", "812 B", "1 KiB", "4.1 KiB", "3.24 MiB", "1 TiB", "more than 10**30 B"]


def test_a_live_duration_is_whole_seconds_under_a_minute() -> None:
    assert [duration(s, whole=True) for s in (0.4, 12.7, 59.4, 64, -3)] == [
        "0 s", "12 s", "59 s", "1 min 04 s", "0 s"]
    assert duration(12.7) == "12.7 s"  # the report keeps its tenth


def test_an_estimate_prints_its_interval_beside_its_value() -> None:
    estimate = {"value": 0.49, "ci": [0.421, 0.55], "level": 0.95, "se": 0.033, "n": 442,
                "method": "bootstrap"}
    assert value(estimate) == "0.49 [0.421, 0.55] 95 %"
    assert value({"value": 0.5, "se": 0.01}) == "0.5 ± 0.01 se"
    assert value({"value": 0.7, "ci": [0.4, 0.6], "level": 0.9}) == \
        "{'value': 0.7, 'ci': [0.4, 0.6], 'level': 0.9}"  # malformed: as the job wrote it
    assert value({"a": 0.123456}) == "{a: 0.1235}"
