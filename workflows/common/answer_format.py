"""Answer formats: ``@name[value]`` fields, as closed-form data-analysis benchmarks name them.

A goal may name the format its answer must take (``@mean_age[mean_age], where "mean_age" is a
number rounded to two decimal places``). The names are the ``@name[...]`` parts; the rounding,
when the format states one (``rounded to two decimal places``), is how closely a number must
match; a format stating several roundings gives each field the one written after its name
(``"trend" … to three decimal places and "mean" … to two``). The same rules serve the intake
(a format with no field is refused), the output processor's check of its answer against the
verified metrics it cites, and the evaluation's scoring against a benchmark's labels. Pure
functions: workflows, activities and the CLI share them.
"""

from __future__ import annotations

import math
import re
from typing import cast

FIELD = re.compile(r"@([A-Za-z_][A-Za-z0-9_]*)\[([^\[\]]*)\]")
ROUNDING = re.compile(r"(\w+)\s+decimal\s+places?", re.IGNORECASE)
WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
         "seven": 7, "eight": 8, "nine": 9, "ten": 10}
MAX_FORMAT_CHARS = 2000


class AnswerFormatError(ValueError):
    """A format naming no ``@name[...]`` field; the message says how one is written."""


def format_names(answer_format: str) -> list[str]:
    """The field names an answer format asks for, in order, each once.

    Raises:
        AnswerFormatError: the format names no ``@name[...]`` field, or is too long.
    """
    if len(answer_format) > MAX_FORMAT_CHARS:
        raise AnswerFormatError(f"the answer format is {len(answer_format)} characters; at "
                                f"most {MAX_FORMAT_CHARS} are allowed")
    names = list(dict.fromkeys(m.group(1) for m in FIELD.finditer(answer_format)))
    if not names:
        raise AnswerFormatError(f"the answer format {answer_format[:80]!r} names no field; "
                                "write each as @name[description], e.g. @mean_age[mean_age]")
    return names


def decimals(answer_format: str) -> int | None:
    """The decimal places the format rounds numbers to (``two decimal places`` → 2), or None."""
    found = ROUNDING.search(answer_format)
    if found is None:
        return None
    word = found.group(1).lower()
    return int(word) if word.isdigit() else WORDS.get(word)


def field_decimals(answer_format: str) -> dict[str, int | None]:
    """Each field's decimal places (None: the format states none for it).

    One stated rounding serves every field; of several, each goes to the field whose name is
    written last before it.
    """
    names = list(dict.fromkeys(m.group(1) for m in FIELD.finditer(answer_format)))
    roundings = list(ROUNDING.finditer(answer_format))
    if len(roundings) <= 1:
        return dict.fromkeys(names, decimals(answer_format))
    mentions = sorted((m.start(), name) for name in names
                      for m in re.finditer(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])",
                                           answer_format))
    places: dict[str, int | None] = dict.fromkeys(names)
    for rounding in roundings:
        before = [name for at, name in mentions if at < rounding.start()]
        word = rounding.group(1).lower()
        if before and places[before[-1]] is None:
            places[before[-1]] = int(word) if word.isdigit() else WORDS.get(word)
    return places


def parse_fields(text: str) -> dict[str, str]:
    """Every ``@name[value]`` in an answer (the first value of a name repeated)."""
    fields: dict[str, str] = {}
    for match in FIELD.finditer(text):
        fields.setdefault(match.group(1), match.group(2).strip())
    return fields


def as_number(value: object) -> float | None:
    """A finite number from a number, its text or an estimate's value, else None.

    ``34.21``, ``"1e-3"`` and ``{"value": 0.49, "ci": [0.42, 0.55]}`` are numbers.
    """
    if isinstance(value, dict) and "value" in value:
        value = cast(dict[str, object], value)["value"]
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def same_value(got: object, want: object, places: int | None) -> bool:
    """Whether two answer values agree: numbers within the rounding, text case-blind.

    With ``places`` decimal places a number may differ by half a unit in the last place
    (the rounding of either side); without, by a relative 1e-6.
    """
    a, b = as_number(got), as_number(want)
    if a is not None and b is not None:
        tolerance = (0.5 * 10.0 ** -places if places is not None
                     else 1e-6 * max(1.0, abs(b)))
        return abs(a - b) <= tolerance + 1e-12
    return str(got).strip().casefold() == str(want).strip().casefold()
