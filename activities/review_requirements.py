"""Package requirements (``numpy``, ``numpy==2.1``, ``scipy>=1.11,<2``) and version checks.

Uses ``packaging`` when it is installed, which understands every PEP 508 form including
extras and environment markers. Without it, a small parser accepts a name with optional extras
and comma-separated ``==``, ``!=``, ``>=``, ``<=``, ``>``, ``<`` and ``~=`` clauses, which is
what job requirements are in practice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_CLAUSE = re.compile(r"^\s*(==|!=|>=|<=|~=|>|<)\s*([A-Za-z0-9.*+!_-]+)\s*$")
_SIMPLE = re.compile(rf"^\s*({_NAME})\s*(\[[^\]]*\])?\s*(.*?)\s*$")
_RELEASE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


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


def parse_requirement(text: str, *, use_packaging: bool = True) -> Requirement:
    """Parse ``text``; raises :class:`RequirementError` naming the problem."""
    if use_packaging:
        parsed = _with_packaging(text)
        if parsed is not None:
            return parsed
    match = _SIMPLE.match(text)
    clauses = match.group(3) if match else ""
    if match is None or (clauses and not all(_CLAUSE.match(c) for c in clauses.split(","))):
        raise RequirementError(f"requirement {text!r} cannot be parsed; write it as name, "
                               "name==1.2 or name>=1.2 (clauses separated by commas)")
    specifier = ",".join(c.replace(" ", "") for c in clauses.split(",")) if clauses else ""
    return Requirement(text=text, name=match.group(1), specifier=specifier)


def _with_packaging(text: str) -> Requirement | None:
    """Parse with ``packaging``, or ``None`` if it is not installed."""
    try:
        from packaging.requirements import InvalidRequirement
        from packaging.requirements import Requirement as Pep508
    except ImportError:
        return None
    try:
        req = Pep508(text)
    except InvalidRequirement as err:
        raise RequirementError(f"requirement {text!r} cannot be parsed: {err}") from err
    applies = req.marker is None or req.marker.evaluate()
    return Requirement(text=text, name=req.name, specifier=str(req.specifier), applies=applies)


def satisfies(requirement: Requirement, installed: str, *, use_packaging: bool = True) -> bool:
    """Whether version ``installed`` meets the requirement's specifier."""
    if not requirement.specifier:
        return True
    if use_packaging:
        try:
            from packaging.specifiers import SpecifierSet
            from packaging.version import InvalidVersion, Version
        except ImportError:
            pass
        else:
            try:
                return SpecifierSet(requirement.specifier).contains(Version(installed),
                                                                    prereleases=True)
            except InvalidVersion:
                return False
    return all(_clause_holds(c, installed) for c in requirement.specifier.split(","))


def _release(version: str, *, strip: bool = True) -> tuple[int, ...] | None:
    match = _RELEASE.match(version)
    if match is None:
        return None
    parts = [int(p) for p in match.group(1).split(".")]
    while strip and len(parts) > 1 and parts[-1] == 0:
        parts.pop()  # 1.0 == 1
    return tuple(parts)


def _clause_holds(clause: str, installed: str) -> bool:
    match = _CLAUSE.match(clause)
    have = _release(installed)
    if match is None or have is None:
        return False
    op, wanted = match.groups()
    if wanted.endswith(".*"):
        prefix = tuple(int(p) for p in wanted[:-2].split(".") if p.isdigit())
        padded = have + (0,) * len(prefix)
        equal = padded[:len(prefix)] == prefix
        return equal if op == "==" else not equal if op == "!=" else False
    want = _release(wanted)
    if want is None:
        return False
    if op == "~=":
        # Compare as written: ~=2.3.0 means >=2.3.0 and 2.3.*, ~=2.0 means >=2.0 and 2.*.
        written = _release(wanted, strip=False) or want
        stem = written[:max(len(written) - 1, 1)]
        padded = (_release(installed, strip=False) or have) + (0,) * len(stem)
        return have >= want and padded[:len(stem)] == stem
    outcome = {"==": have == want, "!=": have != want, ">=": have >= want,
               "<=": have <= want, ">": have > want, "<": have < want}
    return outcome[op]
