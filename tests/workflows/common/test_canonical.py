"""Canonical JSON: one text per value, compact or in the spaced form (pure; no server)."""

from __future__ import annotations

import pytest

from workflows.common.canonical import canonical_json


def test_keys_are_sorted_at_every_depth_and_unicode_is_kept() -> None:
    value = {"b": [{"z": 1, "a": "é"}], "a": None}
    assert canonical_json(value) == '{"a":null,"b":[{"a":"é","z":1}]}'


def test_equal_values_give_equal_text_whatever_their_key_order() -> None:
    assert canonical_json({"x": 1, "y": [2, 3]}) == canonical_json({"y": [2, 3], "x": 1})


def test_the_spaced_form_separates_items_and_values_by_a_space() -> None:
    # Goal identities and recorded prompts use this form; it must not change.
    assert canonical_json({"goal": "ü", "data": [["a.csv", "0f"]]}, spaced=True) == (
        '{"data": [["a.csv", "0f"]], "goal": "ü"}')


def test_a_value_json_cannot_hold_is_refused() -> None:
    with pytest.raises(TypeError):
        canonical_json({"when": object()})
