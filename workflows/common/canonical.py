"""Canonical JSON: one text per value, so equal values give equal digests.

A recording finds a model request by the digest of its JSON, a patch and a goal run are
identified by theirs, and a prompt shows facts as JSON that must read the same on every run.
All of them need the same value to give the same text on every machine and in every
process, so the rules are kept here once: keys sorted, non-ASCII characters kept as they are.

The compact form (no spaces) is what digests are taken of. The spaced form is the one goal
runs were first identified by and prompts were first recorded with; it stays as it is, since
changing it would rename those runs and miss those recordings.
"""

from __future__ import annotations

import json
from typing import Any

_COMPACT = (",", ":")
_SPACED = (", ", ": ")


def canonical_json(value: Any, *, spaced: bool = False) -> str:
    """``value`` as JSON with sorted keys and non-ASCII characters kept as they are.

    Args:
        value: JSON-serialisable data (a model's ``model_dump(mode="json")``, for one).
        spaced: separate items with ``", "`` and keys from values with ``": "``, as goal
            identities and prompts do; by default there are no spaces.

    Raises:
        TypeError: ``value`` holds something JSON cannot represent.
    """
    return json.dumps(value, sort_keys=True, ensure_ascii=False,
                      separators=_SPACED if spaced else _COMPACT)
