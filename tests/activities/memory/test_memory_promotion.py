"""Promotions under ``memory.promotion``: at once, or candidates a person approves."""

from __future__ import annotations

import pytest

from activities.memory.promotion import promoted_status, template_cached
from workflows.contracts.memory import CACHE_AFTER
from workflows.contracts.policy import MemoryPolicy


def test_a_promoted_rule_is_active_or_a_candidate() -> None:
    assert promoted_status("auto") == "active"
    assert promoted_status("person") == "candidate"


@pytest.mark.parametrize(("was", "clean", "promotion", "cached"), [
    (False, 1, "auto", False),
    (False, 2, "auto", True),          # two clean runs make a template
    (False, 2, "person", False),       # a candidate until a person approves it
    (False, 9, "person", False),
    (True, 2, "person", True),         # approved stays cached
])
def test_a_template_is_cached_after_two_clean_runs_or_by_approval(
        was: bool, clean: int, promotion: str, cached: bool) -> None:
    assert CACHE_AFTER == 2
    assert template_cached(was, clean, promotion) is cached  # type: ignore[arg-type]


def test_the_policy_switch_defaults_to_auto_and_refuses_other_words() -> None:
    assert MemoryPolicy().promotion == "auto"
    assert MemoryPolicy(promotion="person").promotion == "person"
    with pytest.raises(ValueError, match="promotion"):
        MemoryPolicy.model_validate({"promotion": "maybe"})
