"""The starting skill library: Agent Skills folders for common analyses of CSV tables.

Each folder under ``data/`` is an Assay-format skill (``SKILL.md`` with the pattern in its
metadata, and ``scripts/`` holding a standard-library job), so a fresh library can apply them
before any task has finished. They load as active skills of origin ``builtin``.
"""

from __future__ import annotations

from pathlib import Path

from skills.folders import import_skills
from workflows.contracts.patterns import Skill


def builtin_dir() -> Path:
    """The folder holding the built-in skill folders."""
    return Path(__file__).resolve().parent / "data"


def builtin_skills() -> list[Skill]:
    """The built-in skills, validated like any import, active and of origin ``builtin``.

    Raises:
        skills.folders.SkillFileError: a built-in folder is broken (a packaging bug).
    """
    return import_skills(builtin_dir(), status="active", origin="builtin")
