"""Package requirements (``numpy``, ``numpy==2.1``, ``scipy>=1.11,<2``) and version checks.

Parsed with ``packaging``, which understands every PEP 508 form including extras and
environment markers.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.requirements import InvalidRequirement
from packaging.requirements import Requirement as Pep508
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version


@dataclass(frozen=True)
class Requirement:
    """One parsed requirement."""

    text: str
    name: str
    specifier: str = ""
    applies: bool = True
    """False when an environment marker excludes this machine."""


class RequirementError(ValueError):
    """A requirement string that cannot be parsed; the message says how to write it."""


def parse_requirement(text: str) -> Requirement:
    """Parse ``text``; raises :class:`RequirementError` naming the problem."""
    try:
        req = Pep508(text)
    except InvalidRequirement as err:
        raise RequirementError(f"requirement {text!r} cannot be parsed ({err}); write it as "
                               "name, name==1.2 or name>=1.2,<2") from err
    applies = req.marker is None or req.marker.evaluate()
    return Requirement(text=text, name=req.name, specifier=str(req.specifier), applies=applies)


def satisfies(requirement: Requirement, installed: str) -> bool:
    """Whether version ``installed`` meets the requirement's specifier."""
    if not requirement.specifier:
        return True
    try:
        return SpecifierSet(requirement.specifier).contains(Version(installed), prereleases=True)
    except InvalidVersion:
        return False
