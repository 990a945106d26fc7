"""The skill library in PostgreSQL: patterns, their statistics and status, and an audit trail.

Every process matching skills keeps an index of the library, or shares a Qdrant server's;
the store is the one truth they share. Every write runs under one advisory lock and takes the
next ``revision``, so revisions grow in commit order and :meth:`SkillStore.changes_since`
never skips a row. Several workers recording uses at once cannot lose a count, a use recorded
twice (a retried activity) counts once, and every change is written to ``skill_events`` in the
same transaction.

:class:`SkillStore` is one store made of five parts, a module each: ``queries`` (reading),
``additions``, ``changes`` (saves and status moves), ``uses`` (statistics) and ``memory`` (a
subagent's recovery memory); ``rows`` holds the statements they share.
"""

from skills.schema import (
    SkillExists,
    SkillInvalid,
    SkillNotFound,
    SkillStatusError,
    SkillStoreUnavailable,
    SkillUnreadable,
)
from skills.store.additions import SkillAdditions
from skills.store.changes import SkillChanges
from skills.store.memory import SkillMemory
from skills.store.queries import SkillEvent, SkillQueries
from skills.store.uses import SkillUses

__all__ = [
    "SkillEvent", "SkillExists", "SkillInvalid", "SkillNotFound", "SkillStatusError",
    "SkillStore", "SkillStoreUnavailable", "SkillUnreadable",
]


class SkillStore(SkillQueries, SkillAdditions, SkillChanges, SkillUses, SkillMemory):
    """PostgreSQL-backed skill library; workers and the CLI build one from the database URL."""

    what = "skill library"
    unavailable = SkillStoreUnavailable
