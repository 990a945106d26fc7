"""How many retries a failure gets: its category's, by a retry strategy per error category.

A failure is transient (it may pass by itself: retried up to 5 times), a matter of
configuration (a parameter to adjust: 3) or fundamental (the approach itself must change: 2);
once its category's retries are spent, the task ends and a person takes it from there. The
failure classes are the sandbox's outcomes, a refusal at review (``rejected``) and missing
evidence (``verification``). A policy's ``max_retries``, when set, gives every failure the
same number instead.
"""

from __future__ import annotations

from typing import Literal

ErrorCategory = Literal["transient", "configuration", "fundamental"]

ATTEMPTS: dict[ErrorCategory, int] = {"transient": 5, "configuration": 3, "fundamental": 2}
"""Retries per category: 5 transient, 3 configuration, 2 fundamental."""
STRATEGY: dict[ErrorCategory, str] = {
    "transient": "exponential_backoff",
    "configuration": "parameter_adjustment",
    "fundamental": "alternative_approach",
}
"""What each category's retry does, in words."""
CATEGORY: dict[str, ErrorCategory] = {
    "killed": "transient",               # stopped from outside its limits: may not recur
    "timeout": "configuration",          # more time within policy, or less work
    "out_of_memory": "configuration",    # a smaller batch, chunk or sample
    "missing_dependency": "configuration",
    "rejected": "configuration",         # the reviewers' objections patched into the spec
    "verification": "configuration",     # evidence at another path: re-scan and re-link
    "nonzero_exit": "fundamental",       # the code itself fails
    "sandbox_violation": "fundamental",  # the job does what it may not
}
"""Assay's failure classes and their categories; a class not named here is fundamental."""


def category_of(failure: str) -> ErrorCategory:
    """The category of a failure class (``fundamental`` for one the table does not know)."""
    return CATEGORY.get(failure, "fundamental")


def retries_for(failure: str, flat: int | None = None) -> int:
    """How many retries ``failure`` gets: ``flat`` when the policy sets it, else its category's.

    Args:
        failure: a sandbox outcome, ``rejected`` or ``verification``.
        flat: the policy's ``max_retries`` (``None``: by category).
    """
    return ATTEMPTS[category_of(failure)] if flat is None else flat


def spent_words(failure: str, retries: int) -> str:
    """What to tell a person once a failure's retries are spent."""
    category = category_of(failure)
    return (f"{category} failure ({failure}): its {retries} retries "
            f"({STRATEGY[category].replace('_', ' ')}) are spent; a person decides what next")
