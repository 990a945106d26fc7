"""The skills pool's ``revise_skills``: the skill writer's text and merges, into the store.

The library workflow asks the writer (agents pool) and hands its answers here. Each lands
only on a pattern still there to take it: a writing on a pattern that is not retired, a merge
on a pair still live and still the same shape (:func:`skills.writing.merge_problem`);
anything else is skipped with its reason. Writing the same answer again changes nothing, so a
retried activity is harmless.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skills.writing import merge_problem, merged_by_writer, revised, written_detail
from workflows.catalogue import REVISE_SKILLS
from workflows.contracts.writing import ReviseAnswer, ReviseInput

if TYPE_CHECKING:
    from skills.store import SkillStore

WRITER = "skill-writer"
"""Who the library's events say made the change."""


class SkillRevisions:
    """``revise_skills`` over the library's store (``None``: nothing is stored)."""

    def __init__(self, store: SkillStore | None) -> None:
        self.store = store

    @REVISE_SKILLS.defn
    async def revise_skills(self, req: ReviseInput) -> ReviseAnswer:
        """Put the writer's texts on their patterns and merge the pairs it agreed to."""
        answer = ReviseAnswer()
        if self.store is None:
            answer.skipped.append("the skill library is not available to this worker")
            return answer
        for written in req.writings:
            try:
                skill = await self.store.get(written.skill_id)
            except (LookupError, ValueError) as err:
                answer.skipped.append(f"{written.skill_id}: {err}")
                continue
            if skill.status == "retired":
                answer.skipped.append(f"{written.skill_id}: retired before its text was written")
                continue
            new = revised(skill, written.writing)
            if new != skill:
                await self.store.save(new, by=WRITER, action="written",
                                      detail=written_detail(written.writing))
            answer.written.append(skill.skill_id)
            if new.pattern.kind != skill.pattern.kind:
                answer.reclassified[skill.skill_id] = new.pattern.kind
        for verdict in req.merges:
            try:
                first = await self.store.get(verdict.first)
                second = await self.store.get(verdict.second)
            except (LookupError, ValueError) as err:
                answer.skipped.append(f"{verdict.first} + {verdict.second}: {err}")
                continue
            if (problem := merge_problem(first, second)) is not None:
                answer.skipped.append(f"{verdict.first} + {verdict.second}: {problem}")
                continue
            kept, gone = merged_by_writer(first, second, verdict)
            await self.store.save_many([kept, gone], by=WRITER, action="merged")
            answer.merged[gone.skill_id] = kept.skill_id
        return answer
