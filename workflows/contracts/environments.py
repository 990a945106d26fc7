"""Job environments: how a job names one, and what a provisioned one is.

A job runs in the sandbox worker's own interpreter (``base``) unless it names an environment
(``science``, or one the operator defines) or lists requirements the base interpreter does
not meet; then the sandbox pool provisions a cached environment for it before it runs
(``prepare_environment``). Requirements are PEP 508 names with version specifiers and markers
only: no URLs, paths or installer options reach the installer.
"""

from __future__ import annotations

import re
from typing import Annotated

from packaging.requirements import InvalidRequirement, Requirement
from pydantic import AfterValidator, Field

from workflows.contracts.base import Model, StrictModel

BASE = "base"
"""The worker's own interpreter (what a job without an environment runs in)."""
NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,39}$"
MAX_REQUIREMENTS = 100
MAX_REQUIREMENT_CHARS = 200
MAX_PINS = 500
"""Most resolved packages one environment may hold (and a record lists)."""
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-\[\], ]*")


def package_name(requirement: str) -> str:
    """The package a requirement or pin names (``seaborn`` of ``seaborn>=0.13``), as written."""
    return re.split(r"[\s\[<>=!~;@(]", requirement.strip(), maxsplit=1)[0]


def check_requirement(text: str) -> str:
    """``text`` if it is a plain PEP 508 requirement; raises ``ValueError`` saying why not."""
    if len(text) > MAX_REQUIREMENT_CHARS:
        raise ValueError(f"a requirement may be at most {MAX_REQUIREMENT_CHARS} characters "
                         f"(this one has {len(text)})")
    if not _PLAIN.match(text):
        raise ValueError(f"requirement {text[:80]!r} must start with a package name; installer "
                         "options (-e, --index-url), paths and URLs are not allowed")
    try:
        parsed = Requirement(text)
    except InvalidRequirement as err:
        raise ValueError(f"requirement {text[:80]!r} cannot be parsed ({err}); write it as "
                         "name, name==1.2 or name>=1.2,<2") from err
    if parsed.url:
        raise ValueError(f"requirement {text[:80]!r} names a direct URL; only package names "
                         "with version specifiers are allowed (packages come from the "
                         "configured index or wheelhouse)")
    return text


RequirementText = Annotated[str, AfterValidator(check_requirement)]
EnvironmentName = Annotated[str, Field(min_length=1, max_length=40, pattern=NAME_PATTERN)]


class PrepareEnvironmentInput(StrictModel):
    """Input of ``prepare_environment``: what a job asks to run in."""

    environment: EnvironmentName | None = None
    requirements: list[RequirementText] = Field(default_factory=list[str],
                                                max_length=MAX_REQUIREMENTS)


class PreparedEnvironment(Model):
    """An environment a job runs in, as provenance records it.

    ``name`` is ``base`` for the worker's own interpreter (then nothing else is set), the
    named set's name, or ``custom`` for requirements alone. ``digest`` is the sha256 of the
    resolved lock and the Python version: the same digest is the same environment on every
    host. ``pins`` are the resolved ``name==version`` lines the sandbox installs from.
    """

    name: str = Field(default=BASE, max_length=40, pattern=r"^[a-z][a-z0-9_-]*$")
    digest: str = Field(default="", pattern=r"^([0-9a-f]{64})?$")
    python: str = Field(default="", max_length=40)
    pins: list[str] = Field(default_factory=list[str], max_length=MAX_PINS)
    requirements: list[str] = Field(default_factory=list[str])
    added: list[str] = Field(default_factory=list[str], max_length=MAX_REQUIREMENTS)
    """The requirements beyond the named set's own (the job's additions; for ``custom``,
    every requirement): what tells ``science + seaborn>=0.13`` from plain ``science``."""
    install_s: float = 0.0
    reused: bool = False
    """True when the environment was already provisioned (nothing was installed)."""

    @property
    def provisioned(self) -> bool:
        """Whether the job runs in a provisioned environment rather than the base one."""
        return bool(self.digest)

    def label(self) -> str:
        """``science@1a2b3c4d5e6f`` or ``base`` (recorded in events and outcomes: unchanged)."""
        return f"{self.name}@{self.digest[:12]}" if self.digest else BASE

    def title(self) -> str:
        """For people: ``science + seaborn>=0.13@1a2b3c4d5e6f``; the label when nothing added."""
        if not self.digest or not self.added or self.name == "custom":
            return self.label()
        return f"{self.name} + {', '.join(self.added)}@{self.digest[:12]}"
