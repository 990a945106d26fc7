"""Reflection memory in PostgreSQL: episodes, semantic rules, procedural templates, a ledger.

Memory lives in the same database as the events. Every write is idempotent or serialised:
episodes are inserted with ``ON CONFLICT DO NOTHING``; rule and template writes for one task
type take an advisory lock, so two workers learning from the same kind of task cannot lose
each other's counts; ledger appends take one lock and chain each entry to the last.

:class:`MemoryStore` is one store made of four parts, a module each: ``episodes``, ``rules``
(checksummed, never applied once changed outside Assay), ``templates`` and ``ledger``.
"""

from activities.memory.schema import job_checksum, rule_checksum, template_id
from activities.memory.store.episodes import EpisodeStore
from activities.memory.store.ledger import LedgerBroken, LedgerEntry, LedgerStore
from activities.memory.store.rules import (
    RuleNotFound,
    RuleStore,
    RuleTampered,
    RuleUnreadable,
)
from activities.memory.store.templates import TemplateStore
from database.engine import DatabaseUnavailable

__all__ = [
    "LedgerBroken", "LedgerEntry", "MemoryStore", "MemoryStoreUnavailable", "RuleNotFound",
    "RuleTampered", "RuleUnreadable", "job_checksum", "rule_checksum", "template_id",
]


class MemoryStoreUnavailable(DatabaseUnavailable):
    """The memory database cannot be reached or prepared; the message says which and why."""


class MemoryStore(EpisodeStore, RuleStore, TemplateStore, LedgerStore):
    """PostgreSQL-backed reflection memory; the worker builds one from the database URL."""

    what = "memory store"
    unavailable = MemoryStoreUnavailable
