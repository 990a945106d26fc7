"""What goes wrong with an environment, in words a plan's author can act on.

uv explains a failed resolution at length; :func:`explain` keeps the one fact that matters
(which package is unknown, which pins conflict, which index is unreachable) and says how to
fix it.
"""

from __future__ import annotations

import re
from typing import Literal

Kind = Literal["unknown", "bad_requirement", "not_found", "conflict", "unreachable",
               "no_wheel", "install_failed", "blocked"]

_NOT_FOUND = re.compile(
    r"Because (\S+) was not found in the (?:package registry|provided package locations)")
_NO_VERSION = re.compile(r"Because there is no version of (\S+?)(==|>|<|~|!|$)")
_CONFLICT = re.compile(r"cause: (Because .*?unsatisfiable\.)", re.S)



class EnvironmentProblem(ValueError):
    """An environment cannot be resolved or provisioned; ``kind`` says which way."""

    def __init__(self, kind: Kind, reason: str) -> None:
        super().__init__(reason)
        self.kind: Kind = kind
        self.reason = reason


def explain(stderr: str, *, index: str) -> EnvironmentProblem:
    """The reason for a failed ``uv`` command, from what it printed."""
    text = " ".join(stderr.split())
    if found := _NOT_FOUND.search(text):
        return EnvironmentProblem("not_found", f"package {found.group(1)!r} was not found in "
                                  f"{index}; check its name (as on the index) or remove it")
    if "Failed to fetch" in text or "error sending request" in text or "tcp connect" in text:
        return EnvironmentProblem("unreachable", f"{index} cannot be reached ({_last_cause(text)})"
                                  "; check the package index setting and the network, or "
                                  "use a local wheelhouse")
    if "no wheels" in text.lower() or "--no-build" in text or "building source" in text.lower():
        return EnvironmentProblem("no_wheel", "a package has no wheel for this machine and "
                                  "building from source is not allowed: "
                                  f"{_last_cause(text)}; pin a version that ships wheels")
    if found := _NO_VERSION.search(text):
        return EnvironmentProblem("conflict", f"no version of {found.group(1)!r} matches the "
                                  f"pins: {_last_cause(text).rstrip('.')}; loosen or fix the pin")
    if conflict := _CONFLICT.search(text):
        return EnvironmentProblem("conflict", f"conflicting pins: {conflict.group(1)} "
                                  "Remove or loosen one of them")
    return EnvironmentProblem("install_failed", f"the installer failed: {_last_cause(text)}")


def _last_cause(text: str) -> str:
    causes = [c.strip() for c in re.split(r"(?:error|cause): ", text) if c.strip()]
    return (causes[-1] if causes else text)[:400]
