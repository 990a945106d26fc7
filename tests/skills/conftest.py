"""The skill tests' names for the suite's skill fixtures (``tests/conftest.py``): ``store`` is
``skill_store`` and ``library`` is ``skill_library``."""

from __future__ import annotations

import pytest

from skills.library import SkillLibrary
from skills.store import SkillStore


@pytest.fixture
def store(skill_store: SkillStore) -> SkillStore:
    return skill_store


@pytest.fixture
def library(skill_library: SkillLibrary) -> SkillLibrary:
    return skill_library
