"""Slugs and stop words: the rules names are cut from text by (pure; no server)."""

from __future__ import annotations

import pytest

from workflows.contracts.words import (
    STOP_WORDS,
    TASK_TYPE_STOP_WORDS,
    plural,
    singular_counts,
    slug,
    slug_words,
    stem,
    word_stems,
)


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


@pytest.mark.parametrize(("forms", "shared"), [
    (["depend", "depends", "depended", "depending"], "depend"),
    (["linear", "linearly"], "linear"),
    (["fit", "fits", "fitted", "fitting"], "fit"),
    (["group", "groups"], "group"),
    (["study", "studies"], "study"),
    (["class", "classes"], "class"),
    (["compare", "compared", "comparing"], "compar"),
    (["match", "matches"], "match"),
])
def test_word_forms_share_one_stem(forms: list[str], shared: str) -> None:
    assert {stem(f) for f in forms} == {shared}


@pytest.mark.parametrize(("a", "b"), [
    ("line", "lineage"), ("outlier", "outlying"), ("analysis", "analyse"), ("only", "on"),
    ("fitness", "fit"), ("mean", "median"),
])
def test_different_words_keep_different_stems(a: str, b: str) -> None:
    assert stem(a) != stem(b)


def test_short_words_and_words_without_a_vowel_left_stay_whole() -> None:
    assert [stem(w) for w in ("is", "was", "its", "bus", "sing", "bed", "only")] == [
        "is", "was", "its", "bus", "sing", "bed", "only"]


def test_word_stems_are_the_stems_of_the_slug_words() -> None:
    assert word_stems("Does Y depend LINEARLY on x?") == {"doe", "y", "depend", "linear", "on",
                                                           "x"}


def test_counts_read_singular_or_plural() -> None:
    assert [plural(n, "task") for n in (0, 1, 2)] == ["0 tasks", "1 task", "2 tasks"]
    assert plural(1, "entry", "entries") == "1 entry" and plural(3, "entry", "entries") == (
        "3 entries")


def test_text_written_with_a_plural_count_of_one_is_mended_when_shown() -> None:
    assert singular_counts("run plan p (1 tasks)?") == "run plan p (1 task)?"
    assert singular_counts("11 tasks, 21 decisions, 1 skills") == "11 tasks, 21 decisions, 1 skill"
