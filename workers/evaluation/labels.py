"""Scoring a formatted answer against a benchmark's labels, as closed-form benchmarks score it.

The run's answer carries the field ``answer.formatted`` when its goal named a format: the
``@name[value]`` pairs the output processor wrote, and what its own check found wrong with
their citations. Every labelled name must be there with the label's value (numbers within the
format's rounding, text case-blind). A run with no formatted answer, or one whose text holds
no ``@name[value]``, fails with that reason (``answer format: ...``), never with an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from workers.evaluation.scoring import MISSING, lookup
from workflows.common.answer_format import field_decimals, same_value

FORMAT_CAUSE = "answer format"
"""The prefix of a miss that is the answer's form, not its values."""


@dataclass
class LabelScore:
    """Which labels the run's formatted answer held, which it missed, and its own problems."""

    held: list[str] = field(default_factory=list[str])
    missed: list[str] = field(default_factory=list[str])
    problems: list[str] = field(default_factory=list[str])


def score_labels(document: Any, answer_format: str, labels: dict[str, str]) -> LabelScore:
    """Every label against the ``@name[value]`` fields of the run's formatted answer."""
    formatted = lookup(document, "answer.formatted")
    if formatted is MISSING or not isinstance(formatted, dict):
        return LabelScore(missed=[f"{FORMAT_CAUSE}: the run's answer has no formatted field "
                                  "(no answer, or the output processor was not asked)"])
    given = cast(dict[str, Any], formatted)
    values = cast(dict[str, Any], given.get("values") or {})
    problems = [str(p) for p in cast(list[Any], given.get("problems") or [])]
    if not values:
        text = str(given.get("text") or "")[:80]
        return LabelScore(missed=[f"{FORMAT_CAUSE}: no @name[value] field can be read in "
                                  f"{text!r}"], problems=problems)
    places = field_decimals(answer_format)
    score = LabelScore(problems=problems)
    for name, want in labels.items():
        got = values.get(name)
        if got is None:
            score.missed.append(f"{FORMAT_CAUSE}: @{name} missing (want {want})")
        elif same_value(got, want, places.get(name)):
            score.held.append(f"@{name}[{got}] (want {want})")
        else:
            score.missed.append(f"@{name}[{got}] (want {want})")
    return score
