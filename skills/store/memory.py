"""A subagent's recovery memory, updated from the tasks that ran as the subagent.

Each task's tries of the remembered fixes (and the changes that cured it outside the memory)
update the pattern's ``recovery`` and ``recovery_misses`` in place, by the rule of
``workflows.library.subagents.remembered``, under the library's write lock so no concurrent
count or status change is lost. A task is learned from once: the update is recorded in the
audit trail (``memory``) with the task's key, and a repeat of that key changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import select

from database.engine import Database
from skills.schema import EVENTS
from skills.store.rows import lock_library, now, read_locked, record, write
from workflows.contracts.patterns import Skill
from workflows.contracts.subagents import MemoryTry
from workflows.library.subagents import cures_of, fix_key, remembered

if TYPE_CHECKING:  # a store opened to read skills does not load the learner's contracts
    from workflows.contracts.reflection import PatchChange
    from workflows.contracts.skills import TaskOutcome

MEMORY_ACTION = "memory"
"""The audit trail's action for one task's update of a subagent's memory."""


class SkillMemory(Database):
    """The recovery-memory part of :class:`~skills.store.SkillStore`."""

    async def learn_memory(self, outcome: TaskOutcome) -> bool:
        """Update the memory of the subagent ``outcome`` ran as; whether anything changed.

        Nothing changes for a task that tried no remembered fix and was cured by none, that
        did not run as a subagent, or whose key was already learned from.
        """
        use = outcome.skill
        cures = cures_of(outcome.fixes, outcome.memory_tries,
                         completed=outcome.status == "completed")
        if use is None or not use.subagent or not (outcome.memory_tries or cures):
            return False
        stored = await self.record_memory(use.skill_id, key=outcome.key,
                                          tries=outcome.memory_tries, cures=cures)
        return stored is not None

    async def record_memory(self, skill_id: str, *, key: str, tries: Sequence[MemoryTry],
                            cures: Sequence[PatchChange] = ()) -> Skill | None:
        """Update a subagent's memory from the task ``key``'s tries, once per key.

        Returns:
            The skill as stored after the update, or ``None`` when this key was already
            learned from (nothing changes).

        Raises:
            SkillNotFound: no skill has this id.
            SkillUnreadable: the stored row is not a valid skill.
            ValueError: the key is empty, or the skill is not a subagent.
        """
        if not key.strip():
            raise ValueError(f"memory of skill {skill_id} not updated: the key (run_id/task_id) "
                             "is empty")
        async with self.engine.begin() as conn:
            await lock_library(conn)
            current = await read_locked(conn, skill_id)
            if current.pattern.kind != "subagent":
                raise ValueError(f"skill {skill_id} is a {current.pattern.kind}, not a "
                                 "subagent: it keeps no recovery memory")
            seen = (await conn.execute(
                select(EVENTS.c.seq).where(EVENTS.c.skill_id == skill_id,
                                           EVENTS.c.action == MEMORY_ACTION,
                                           EVENTS.c.detail["key"].astext == key))).first()
            if seen is not None:
                return None
            pattern = current.pattern
            memory, misses = remembered(pattern.recovery, pattern.recovery_misses, tries, cures)
            changed = current.model_copy(update={"pattern": pattern.model_copy(update={
                "recovery": memory, "recovery_misses": misses})})
            stored = await write(conn, changed, now())
            await record(conn, "skill-library", [(skill_id, MEMORY_ACTION, {
                "key": key,
                "tries": [{"fix": fix_key(t.fix), "result": t.result} for t in tries],
                "cures": [fix_key(c) for c in cures],
                "memory": [fix_key(f) for f in memory]})])
            return stored
