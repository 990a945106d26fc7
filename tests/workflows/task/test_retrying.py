"""The retry strategy by error category: which failure is which, and its retries."""

from __future__ import annotations

import pytest

from workflows.task.retrying import ATTEMPTS, category_of, retries_for, spent_words


def test_the_seed_numbers() -> None:
    assert ATTEMPTS == {"transient": 5, "configuration": 3, "fundamental": 2}


@pytest.mark.parametrize(("failure", "category", "retries"), [
    ("killed", "transient", 5),
    ("timeout", "configuration", 3),
    ("out_of_memory", "configuration", 3),
    ("missing_dependency", "configuration", 3),
    ("rejected", "configuration", 3),
    ("verification", "configuration", 3),
    ("nonzero_exit", "fundamental", 2),
    ("sandbox_violation", "fundamental", 2),
    ("something_new", "fundamental", 2),      # a class the table does not know: the fewest
])
def test_each_failure_class_has_its_category(failure: str, category: str,
                                             retries: int) -> None:
    assert category_of(failure) == category
    assert retries_for(failure) == retries


@pytest.mark.parametrize("flat", [0, 2, 5])
def test_a_policy_number_overrides_every_category(flat: int) -> None:
    assert {retries_for(f, flat) for f in ("killed", "timeout", "nonzero_exit")} == {flat}


def test_spent_words_name_the_category_and_a_person() -> None:
    words = spent_words("killed", 5)
    assert words.startswith("transient failure (killed): its 5 retries (exponential backoff)")
    assert "a person" in words
