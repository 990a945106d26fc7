"""How the report prints numbers: four significant digits, integers and flags unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from activities.reports.numbers import duration, number, value


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
