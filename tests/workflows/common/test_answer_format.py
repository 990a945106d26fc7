"""Answer formats: the fields a format names, its rounding, and values compared by it."""

from __future__ import annotations

import pytest

from workflows.common.answer_format import (
    AnswerFormatError,
    as_number,
    decimals,
    field_decimals,
    format_names,
    parse_fields,
    same_value,
)

FORMAT = ('@mean_age[mean_age] @city[name], where "mean_age" is a number rounded to two '
          'decimal places')


def test_a_format_names_its_fields_in_order_once_each() -> None:
    assert format_names(FORMAT + " @city[again]") == ["mean_age", "city"]


def test_a_format_with_no_field_is_refused_saying_how_to_write_one() -> None:
    with pytest.raises(AnswerFormatError, match=r"@name\[description\]"):
        format_names("the mean age, rounded")


@pytest.mark.parametrize(("text", "places"), [
    (FORMAT, 2), ("rounded to 3 decimal places", 3), ("rounded to one decimal place", 1),
    ("@x[x], an integer", None)])
def test_the_rounding_is_read_in_words_or_digits(text: str, places: int | None) -> None:
    assert decimals(text) == places


def test_an_answer_yields_each_field_with_its_value() -> None:
    assert parse_fields("The answer: @mean_age[ 34.21 ] and @city[Oslo] @city[Bergen]") == {
        "mean_age": "34.21", "city": "Oslo"}
    assert parse_fields("34.21") == {}


def test_numbers_match_within_half_a_unit_of_the_format_s_last_place() -> None:
    assert same_value("34.21", 34.2149, 2)
    assert not same_value("34.22", 34.2149, 2)
    assert same_value("1e-3", "0.001", None) and not same_value("0.0011", "0.001", None)
    assert same_value(" Oslo", "oslo", 2) and not same_value("Oslo", "Bergen", None)


def test_several_roundings_go_each_to_the_field_named_before_it() -> None:
    answer_format = ('@trend[trend], @mean_1999[mean_1999], where "trend" is the rise in ppm a '
                     'year rounded to three decimal places and "mean_1999" the annual mean of '
                     '1999 in ppm rounded to two decimal places')
    assert field_decimals(answer_format) == {"trend": 3, "mean_1999": 2}
    assert field_decimals("@a[a], @b[b], both rounded to two decimal places") == {"a": 2, "b": 2}
    assert field_decimals("@a[a], @b[b]") == {"a": None, "b": None}
    assert field_decimals("@n[count, a whole number], @m[m rounded to 2 decimal places], "
                          "@s[s rounded to 4 decimal places]") == {"n": None, "m": 2, "s": 4}


def test_an_estimate_counts_as_its_value() -> None:
    assert as_number({"value": 0.49, "ci": [0.42, 0.55]}) == 0.49
    assert same_value("0.49", {"value": 0.4949, "ci": [0.4, 0.6]}, 2)
    assert as_number({"ci": [0.42, 0.55]}) is None
