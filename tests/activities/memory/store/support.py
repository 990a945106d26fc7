"""What the memory store tests share: times, rows to store, SQL run behind Assay's back."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import text

from activities.memory.store import LedgerEntry, MemoryStore

db = pytest.mark.integration
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TYPE = "train-classifier"


async def sql(store: MemoryStore, statement: str, **params: Any) -> None:
    async with store.engine.begin() as conn:
        await conn.execute(text(statement), params)


def entries(*ids: str, run: str = "run-1") -> list[LedgerEntry]:
    return [LedgerEntry(entry_id=i, kind="rule", run_id=run, task_id="a",
                        body={"rule_id": i, "confidence": 0.5, "ratio": 1.0, "big": 1e30})
            for i in ids]
