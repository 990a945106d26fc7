"""The numbers of a model-written answer that no verified metric holds are found, by one rule."""

from __future__ import annotations

from activities.reports.claims import flagged_line, unheld, verified_numbers
from workflows.contracts.estimates import Estimate

R2 = Estimate(value=0.49, ci=(0.421, 0.55), level=0.95, n=442)


def test_a_number_no_metric_holds_is_flagged_and_a_held_one_is_not() -> None:
    pool = verified_numbers([R2])
    assert unheld("Pooled R² 0.49 (95 % CI 0.421\u20130.55), though 0.73 was hoped for.",
                  pool) == ["0.73"]


def test_rounding_to_the_written_precision_holds_and_past_it_does_not() -> None:
    assert unheld("r2 is 0.49", [0.4949]) == []
    assert unheld("r2 is 0.49", [0.4951]) == ["0.49"]
    assert unheld("r2 is 0.5", [0.4951]) == []
    assert unheld("BMI +37.5 per SD", [37.46]) == []
    assert unheld("BMI +37.5 per SD", [37.56]) == ["+37.5"]


def test_percentages_hold_as_written_or_as_a_fraction() -> None:
    assert unheld("It explains 49 % of the variance.", [0.49]) == []
    assert unheld("It explains 49.0% of the variance.", [0.4902]) == []
    assert unheld("It explains 49 % of the variance.", [49.2]) == []
    assert unheld("It explains 52 % of the variance.", [0.49]) == ["52 %"]


def test_a_minus_sign_must_match_a_negative_metric_and_no_sign_matches_either() -> None:
    assert unheld("The slope is -0.12.", [-0.12]) == []
    assert unheld("The slope is \u22120.12.", [-0.12]) == []
    assert unheld("The slope is -0.12.", [0.12]) == ["-0.12"]
    assert unheld("It fell by 0.12.", [-0.12]) == []


def test_counts_years_labels_and_versions_are_not_claims() -> None:
    text = ("In 2024, cycle 3 of 442 patients used 5-fold cv_r2 on task t1 with numpy 2.4.6; "
            "n = 60 rows.")
    assert unheld(text, []) == []


def test_each_number_is_listed_once_in_order_and_said_in_one_line() -> None:
    flagged = unheld("0.73 then 1.5e-03 then 0.73 again, and 12.5 %", [])
    assert flagged == ["0.73", "1.5e-03", "12.5 %"]
    assert flagged_line(flagged) == "Not held by a verified metric: 0.73, 1.5e-03, 12.5 %."
    assert flagged_line([]) == ""


def test_numbers_inside_lists_mappings_and_estimates_are_verified_and_flags_are_not() -> None:
    pool = verified_numbers([{"means": [1.25, 2.5]}, True, "text", R2, 3])
    assert sorted(pool) == [0.421, 0.49, 0.55, 0.95, 1.25, 2.5, 3.0, 442.0]
    assert unheld("means 1.25 and 2.50; 4.0", pool) == ["4.0"]
