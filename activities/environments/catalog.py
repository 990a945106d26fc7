"""Named environments: requirement files shipped with Assay and added by the operator.

A named set is a ``<name>.txt`` file of PEP 508 requirements, one a line (``#`` starts a
comment). The operator's directory (``ASSAY_ENVIRONMENTS_DIR``) is searched first, so an
operator may also redefine ``science``.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from activities.environments.errors import EnvironmentProblem
from workflows.contracts.environments import NAME_PATTERN, check_requirement

MAX_FILE_BYTES = 64 * 1024


class Catalog:
    """The named sets one worker knows.

    Args:
        operator_dir: the operator's ``<name>.txt`` files (none: only the shipped sets).
    """

    def __init__(self, operator_dir: Path | None = None) -> None:
        self._operator_dir = operator_dir

    def names(self) -> list[str]:
        """Every named set, sorted."""
        found = {p.stem for p in self._shipped().iterdir() if p.name.endswith(".txt")}
        if self._operator_dir is not None and self._operator_dir.is_dir():
            found |= {p.stem for p in self._operator_dir.glob("*.txt")}
        return sorted(n for n in found if re.match(NAME_PATTERN, n))

    def requirements(self, name: str) -> list[str]:
        """The requirements of the named set ``name``.

        Raises:
            EnvironmentProblem: no such set, or its file is unreadable or malformed.
        """
        if not re.match(NAME_PATTERN, name):
            raise EnvironmentProblem("unknown", f"environment name {name[:60]!r} is not a "
                                     "name (lower-case letters, digits, - and _)")
        text = self._read(name)
        lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
        wanted = [line for line in lines if line]
        for line in wanted:
            try:
                check_requirement(line)
            except ValueError as err:
                raise EnvironmentProblem("bad_requirement",
                                         f"environment {name!r}: {err}") from err
        return wanted

    def added(self, name: str | None, requirements: list[str]) -> list[str]:
        """Which of ``requirements`` (normalised) the named set ``name`` does not ask for."""
        own: set[str] = set()
        if name and name != "custom":
            try:
                own = {normalise(r) for r in self.requirements(name)}
            except EnvironmentProblem:
                own = set()
        return [r for r in requirements if r not in own]

    def _read(self, name: str) -> str:
        if self._operator_dir is not None:
            path = self._operator_dir / f"{name}.txt"
            if path.is_file():
                if path.stat().st_size > MAX_FILE_BYTES:
                    raise EnvironmentProblem("bad_requirement", f"{path} is over "
                                             f"{MAX_FILE_BYTES // 1024} KiB")
                return path.read_text(encoding="utf-8")
        shipped = self._shipped() / f"{name}.txt"
        if shipped.is_file():
            return shipped.read_text(encoding="utf-8")
        raise EnvironmentProblem("unknown", f"there is no environment named {name!r}; known: "
                                 f"{', '.join(self.names()) or 'none'} (an operator adds one "
                                 "as <name>.txt in ASSAY_ENVIRONMENTS_DIR)")

    @staticmethod
    def _shipped() -> Path:
        return Path(str(resources.files("activities.environments") / "data"))


def normalise(text: str) -> str:
    """A requirement with its package name canonical (``Scikit_Learn>=1`` → ``scikit-learn>=1``)."""
    parsed = Requirement(text)
    parsed.name = canonicalize_name(parsed.name)
    return str(parsed)
