"""The memory ledger in PostgreSQL: an append-only, hash-chained record of what memory learned.

Appends take one lock and chain each entry to the last (see :mod:`activities.common.chain`):
an entry's ``sha256`` is the digest of the canonical JSON of its ``entry_id``, ``kind``,
``run_id``, ``task_id``, ``body`` and ``prev``, and ``prev`` is the ``sha256`` of the entry
before it. The table itself refuses UPDATE, DELETE and TRUNCATE.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, cast

from pydantic import Field
from sqlalchemy import bindparam, select
from sqlalchemy.dialects.postgresql import JSONB

from activities.common.chain import GENESIS, ChainWalk, chain, link
from activities.memory.schema import LEDGER, canonical
from database.engine import Database, advisory_lock
from workflows.contracts.base import Model

_LEDGER_LOCK = (0x4153534C, 0)  # ledger appends
_ID_CHUNK = 5000
LEDGER_PAGE = 1000
LINKED = ("entry_id", "kind", "run_id", "task_id", "body")
"""The columns an entry's digest covers, with ``prev``."""
LedgerKind = Literal["note", "patch", "outcome", "rule", "template"]


class LedgerBroken(ValueError):
    """The memory ledger's chain no longer holds; the message names the entry's ``seq``."""


class LedgerEntry(Model):
    """One entry to append to the memory ledger; ``entry_id`` makes appends idempotent."""

    entry_id: str = Field(min_length=1)
    kind: LedgerKind
    run_id: str = ""
    task_id: str = ""
    body: dict[str, Any] = Field(default_factory=dict[str, Any])


def _chunks(items: Sequence[str], size: int = _ID_CHUNK) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _check_link(walk: ChainWalk, row: Mapping[Any, Any]) -> None:
    where = f"memory ledger broken at seq {row['seq']} (entry {row['entry_id']})"
    if not walk.follows(row["prev"], row["sha256"]):
        raise LedgerBroken(f"{where}: it does not carry the checksum of the entry before it "
                           "(an entry was changed, removed or reordered)")
    if link({name: row[name] for name in LINKED}, row["prev"], canonical).digest != row["sha256"]:
        raise LedgerBroken(f"{where}: its content no longer matches its checksum (it was "
                           "changed after it was written)")


class LedgerStore(Database):
    """The ledger part of :class:`~activities.memory.store.MemoryStore`."""

    async def append_ledger(self, entries: Sequence[LedgerEntry]) -> int:
        """Append the entries not yet in the ledger, chained in order; returns how many."""
        fresh = list({e.entry_id: e for e in reversed(entries)}.values())[::-1]
        if not fresh:
            return 0
        async with self.engine.begin() as conn:
            await advisory_lock(conn, *_LEDGER_LOCK)
            known: set[str] = set()
            for ids in _chunks([e.entry_id for e in fresh]):
                known.update((await conn.execute(
                    select(LEDGER.c.entry_id).where(LEDGER.c.entry_id.in_(ids)))).scalars())
            fresh = [e for e in fresh if e.entry_id not in known]
            if not fresh:
                return 0
            prev = (await conn.execute(select(LEDGER.c.sha256).order_by(LEDGER.c.seq.desc())
                                       .limit(1))).scalar_one_or_none() or GENESIS
            # Hash the bodies as JSONB gives them back, so verification recomputes the same.
            stored = await conn.execute(
                select(bindparam("bodies", [e.body for e in fresh], type_=JSONB)))
            bodies = cast("list[dict[str, Any]]", stored.scalar_one())
            content = [{**e.model_dump(include=set(LINKED)), "body": body}
                       for e, body in zip(fresh, bodies, strict=True)]
            links = chain(content, prev, canonical)
            rows = [{**fields, "prev": linked.prev, "sha256": linked.digest}
                    for fields, linked in zip(content, links, strict=True)]
            await conn.execute(LEDGER.insert(), rows)
            return len(rows)

    async def verify_ledger(self) -> int:
        """Check the whole chain; returns the number of entries.

        Raises:
            LedgerBroken: an entry's ``prev`` or ``sha256`` no longer matches the chain.
        """
        walk, after = ChainWalk(), 0
        async with self.engine.connect() as conn:
            while True:
                rows = (await conn.execute(select(LEDGER).where(LEDGER.c.seq > after)
                                           .order_by(LEDGER.c.seq).limit(LEDGER_PAGE))
                        ).mappings().all()
                for row in rows:
                    _check_link(walk, row)
                if len(rows) < LEDGER_PAGE:
                    return walk.count
                after = rows[-1]["seq"]

    async def ledger(self, run_id: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        """The last ``limit`` ledger entries (of one run, if given), oldest first."""
        stmt = select(LEDGER).order_by(LEDGER.c.seq.desc()).limit(max(limit, 0))
        if run_id is not None:
            stmt = stmt.where(LEDGER.c.run_id == run_id)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt)).mappings().all()
        return [dict(row) for row in reversed(rows)]
