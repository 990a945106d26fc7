"""The one helper every bounded list of a prompt goes through: what matters kept first, and
a note that says what was left out."""

from __future__ import annotations

from workflows.common.cuts import NAMES_LISTED, keep, keep_mapping, note


def test_a_list_within_its_bound_is_kept_whole_without_a_note() -> None:
    assert keep(["a", "b"], 2, what="metric", name=str) == (["a", "b"], "")


def test_named_items_are_kept_first_and_the_rest_named_in_the_note() -> None:
    items = [f"m{i}" for i in range(24)]
    kept, said = keep(items, 20, what="metric", first={"m22", "m23"}, name=str)
    assert kept == [*items[:18], "m22", "m23"]
    assert said == "… 4 more metrics not shown: m18, m19, m20, m21"


def test_a_mapping_keeps_its_values_and_order() -> None:
    metrics = {f"m{i}": i for i in range(5)}
    kept, said = keep_mapping(metrics, 3, what="metric", first={"m4"})
    assert kept == {"m0": 0, "m1": 1, "m4": 4}
    assert said == "… 2 more metrics not shown: m2, m3"


def test_unnamed_items_are_counted_with_their_plural() -> None:
    kept, said = keep(list(range(40)), 12, what="hypothesis", many="hypotheses")
    assert kept == list(range(12)) and said == "… 28 more hypotheses not shown"
    assert keep(list(range(3)), 2, what="task")[1] == "… 1 more task not shown"


def test_a_long_list_of_left_out_names_is_itself_bounded() -> None:
    names = [f"{'x' * 100}{i}" for i in range(NAMES_LISTED + 5)]
    said = note(len(names), "artifact", names=names)
    assert said.endswith(" and 5 others") and said.count("…") == NAMES_LISTED + 1
    assert len(said) < 2000
