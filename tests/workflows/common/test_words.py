"""Slugs and stop words: the rules names are cut from text by (pure; no server)."""

from __future__ import annotations

import pytest

from workflows.common.words import STOP_WORDS, TASK_TYPE_STOP_WORDS, slug, slug_words


def test_slug_words_are_the_ascii_letter_and_digit_runs_lower_cased() -> None:
    assert slug_words("R² of Petal_Width ~ 3rd-run") == ["r", "of", "petal", "width", "3rd",
                                                         "run"]


@pytest.mark.parametrize(("text", "expected"), [
    ("Does sepal length differ between iris species?", "does-sepal-length-differ"),
    ("alpha beta", "alpha-beta"),
    ("x" * 30, "x" * 25),  # a first word too long is cut
    ("鸢尾花", "none"),
])
def test_whole_word_slugs_stop_before_the_word_that_would_pass_the_limit(
        text: str, expected: str) -> None:
    assert slug(text, limit=25, empty="none") == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Does sepal length differ between iris species?", "does-sepal-length-dif"),
    ("alpha beta-", "alpha-beta"),
    ("abcdefghijklmnopqrst - uvw", "abcdefghijklmnopqrst"),  # no hyphen left at the end
    ("", "plan"),
])
def test_cut_slugs_end_at_the_limit_even_inside_a_word(text: str, expected: str) -> None:
    assert slug(text, limit=21, empty="plan", whole_words=False) == expected


def test_the_two_stop_lists_keep_their_own_words() -> None:
    # Task types key stored memory and name skills: their list must not follow the other.
    assert {"per", "via", "within"} <= TASK_TYPE_STOP_WORDS - STOP_WORDS
    assert {"what", "how", "please"} <= STOP_WORDS - TASK_TYPE_STOP_WORDS
    assert len(TASK_TYPE_STOP_WORDS) == 47 and len(STOP_WORDS) == 94
