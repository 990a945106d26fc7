"""What the skill store tests share: a skill to store, its uses, SQL behind Assay's back."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import text

from skills.store import SkillStore
from workflows.contracts.patterns import Deviation, Skill, SkillParameter, SkillPattern

db = pytest.mark.integration
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def make_skill(name: str = "csv-profile", version: int = 1, *, status: str = "candidate",
               description: str = "Profile the columns of a CSV table", **extra: Any) -> Skill:
    pattern = SkillPattern(
        name=name, version=version, description=description,
        context="summary statistics of every column of a table",
        parameters=[SkillParameter(name="data", type="file_path", target="input",
                                   extensions=["csv"]),
                    SkillParameter(name="bins", type="integer", default=10, minimum=1,
                                   maximum=100)],
        source_runs=["run-1"])
    return Skill.model_validate({"pattern": pattern, "status": status, "confidence": 0.8,
                                 **extra})


async def sql(store: SkillStore, statement: str, **params: Any) -> None:
    async with store.engine.begin() as conn:
        await conn.execute(text(statement), params)


async def revision(store: SkillStore) -> int:
    return (await store.changes_since(0))[0]


async def use(store: SkillStore, skill_id: str, key: str, *, succeeded: bool = True,
              deviation: Deviation = "none", duration_s: float = 2.0, cost_usd: float = 0.01,
              at: datetime = T0) -> tuple[Skill, bool]:
    return await store.record_use(skill_id, succeeded=succeeded, duration_s=duration_s,
                                  cost_usd=cost_usd, at=at, deviation=deviation, key=key)


async def actions(store: SkillStore, skill_id: str) -> list[str]:
    return [event.action for event in await store.events(skill_id)]
