"""The skills pool's activities: match, record, extract and maintain.

The library's rows live in PostgreSQL (``SkillStore``), the source of truth shared by every
worker; a Qdrant index of them (``SkillIndex``: this process's own, or a server's collection
that every worker writes by stable point ids) gets the rows changed since this worker last
looked before every search, so a skill approved or extracted elsewhere is found at once. A
hit applies only if its row is still applicable (a point from an older view cannot apply).

``SkillLibrary(None)`` is a library with nothing in it (no database): every match answers
"no skill", recording and extraction do nothing. Workflow tests run with it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from activities.metrics import record
from skills.apply import header_columns, importable
from skills.choosing import GOAL_KEY, choose
from skills.guidelines import matched_guidelines
from workflows.catalogue import EXTRACT_SKILLS, MAINTAIN_SKILLS, MATCH_SKILLS, RECORD_OUTCOMES
from workflows.contracts.patterns import Skill
from workflows.contracts.skills import (
    ExtractAnswer,
    ExtractInput,
    MaintainAnswer,
    MaintainInput,
    MatchAnswer,
    MatchInput,
    RecordAnswer,
    TaskOutcome,
)
from workflows.contracts.writing import MAX_JUDGED, MAX_WRITINGS, MergeCandidate

if TYPE_CHECKING:
    from skills.index import SkillIndex
    from skills.store import SkillStore

log = logging.getLogger("assay.skills")

APPLICABLE = ("active", "trial")


class SkillLibrary:
    """Activities of the skill library over a store and an index (per process or shared)."""

    def __init__(self, store: SkillStore | None,
                 index_factory: Callable[[], SkillIndex] | None = None, *,
                 can_import: Callable[[str], bool] = importable) -> None:
        self.store = store
        self._index_factory = index_factory
        self._index: SkillIndex | None = None
        self._revision = 0
        self._lock = asyncio.Lock()
        self._can_import = can_import

    async def _synced(self) -> SkillIndex | None:
        """The index, with every row changed since the last look applied."""
        if self.store is None or self._index_factory is None:
            return None
        async with self._lock:
            if self._index is None:
                self._index = self._index_factory()
            revision, changed = await self.store.changes_since(self._revision)
            if changed:
                live = [s for s in changed if s.status != "retired"]
                gone = [s.skill_id for s in changed if s.status == "retired"]
                if live:
                    await asyncio.to_thread(self._index.upsert, live)
                if gone:
                    await asyncio.to_thread(self._index.remove, gone)
            self._revision = revision
            return self._index

    def close(self) -> None:
        """Close the index (the store is closed by its owner)."""
        if self._index is not None:
            self._index.close()
            self._index = None

    # --- matching -----------------------------------------------------------------------

    @MATCH_SKILLS.defn
    async def match_skills(self, req: MatchInput) -> MatchAnswer:
        """Patterns fitting a goal (then the plan) or a plan's jobless tasks (their jobs)."""
        answer = MatchAnswer()
        index = await self._synced()
        if index is None or self.store is None:
            reason = "the skill library is not available to this worker"
            if req.goal is not None:
                answer.reasons[GOAL_KEY] = reason
            for task in req.tasks:
                if not task.has_job:
                    answer.reasons[task.task_id] = reason
            return answer
        from skills.index import reformulate

        asks: list[tuple[str, str, list[str], str, list[str]]] = []
        if req.goal is not None:
            asks.append((GOAL_KEY, req.goal, list(req.data_names), f"{req.run_id}/goal", []))
        asks.extend((t.task_id, t.action, list(t.input_names), f"{req.run_id}/{t.task_id}",
                     list(t.checked_metrics)) for t in req.tasks if not t.has_job)
        now = datetime.now(UTC)
        headers = {name: header_columns(head) for name, head in req.data_heads.items()}
        retrieved_ids: list[str] = []
        for key, text, data, use_key, checked in asks:
            queries = reformulate(text, req.policy.queries, data=data)
            hits = await asyncio.to_thread(
                index.search, queries, top_k=req.policy.top_k, threshold=req.policy.threshold,
                mmr_lambda=req.policy.mmr_lambda, statuses=APPLICABLE) if queries else []
            record.skill_retrieved(bool(hits))
            if not hits:
                indexed = await asyncio.to_thread(len, index)  # a server's count: I/O
                answer.reasons[key] = (f"no skill above similarity {req.policy.threshold:g} "
                                       f"among {indexed} indexed")
                if indexed:
                    answer.unmatched.append(key)
                continue
            skills = {s.skill_id: s for s in await self._rows([h.skill_id for h in hits])
                      if s.status in APPLICABLE}
            retrieved_ids.extend(skills)
            found, application, reason = choose(req.policy, key, text, data, use_key, hits,
                                                skills, now, can_import=self._can_import,
                                                headers=headers, checked=checked)
            guides = matched_guidelines(hits, skills, text, data, can_import=self._can_import,
                                        headers=headers)
            if guides:
                answer.guidelines[key] = guides
            answer.retrieved[key] = found
            if application is not None:
                answer.applications.append(application)
            else:
                answer.reasons[key] = reason
        if retrieved_ids:  # once per task (or goal) it was retrieved for
            await self.store.count_retrieved(sorted(retrieved_ids))
        return answer

    async def _rows(self, skill_ids: Sequence[str]) -> list[Skill]:
        assert self.store is not None
        out: list[Skill] = []
        for skill_id in skill_ids:
            try:
                out.append(await self.store.get(skill_id))
            except (LookupError, ValueError):  # gone since the index saw it, or unreadable
                continue
        return out

    # --- outcomes, extraction, maintenance -------------------------------------------------

    @RECORD_OUTCOMES.defn
    async def record_outcomes(self, outcomes: list[TaskOutcome]) -> RecordAnswer:
        """Count each finished task's use of a skill; a subagent's memory learns from it.

        A skill or guideline offered to a task counts as used only when the task's job shows
        it (alpha_match at least theta, :mod:`skills.utilisation`); each task's beta_util is
        in the answer.
        """
        if self.store is None:
            return RecordAnswer(recorded=len(outcomes))
        from skills.outcomes import record_outcomes

        return await record_outcomes(self.store, outcomes)

    @EXTRACT_SKILLS.defn
    async def extract_skills(self, req: ExtractInput) -> ExtractAnswer:
        """Batch extraction: contrast the batch's successes with its failures."""
        answer = ExtractAnswer()
        if self.store is None:
            answer.skipped.append("the skill library is not available to this worker")
            return answer
        from skills.extract import extract
        from skills.writing import briefs

        existing = await self.store.list()
        found = extract(req.outcomes, existing, now=datetime.now(UTC),
                        auto_approve=req.auto_approve)
        batch = {"batch": batch_key(req.outcomes)}
        known = {s.skill_id for s in existing}
        fresh = [s for s in [*found.new, *found.versions] if s.skill_id not in known]
        if fresh:
            await self.store.add_many(fresh, by="extraction", detail=batch)
        for skill in found.updated:
            events = await self.store.events(skill.skill_id)
            if any(e.detail.get("batch") == batch["batch"] for e in events):
                continue  # a retried activity: this batch already counted for this skill
            await self.store.save(skill, by="extraction", action="evidence", detail=batch)
        answer.created = [s.skill_id for s in found.new]
        answer.versions = [s.skill_id for s in found.versions]
        answer.activated = [s.skill_id for s in [*found.new, *found.versions]
                            if s.status == "active"]
        answer.skipped = list(found.skipped)
        if req.briefs:
            made = [*found.new, *found.versions][:MAX_WRITINGS]
            answer.briefs = briefs(made, req.outcomes)
        return answer

    @MAINTAIN_SKILLS.defn
    async def maintain_skills(self, req: MaintainInput) -> MaintainAnswer:
        """Score every live pattern, prune the bottom share, merge near-duplicates."""
        answer = MaintainAnswer()
        index = await self._synced()
        if self.store is None or index is None:
            return answer
        from skills.maintain import apply_prune, merge, plan_maintenance
        from skills.writing import brief

        live = await self.store.list(["active", "trial"])
        by_id = {s.skill_id: s for s in live}

        def similarity(a: str, b: str) -> float:
            try:
                return index.similarity(a, b)
            except KeyError:
                return 0.0

        plan = plan_maintenance(live, similarity)
        answer.scored = len(plan.scores)
        for skill_id in plan.prune:
            await self.store.save(apply_prune(by_id[skill_id], finished=req.finished),
                                  by="maintenance",
                                  action="pruned",
                                  detail={"utility": plan.scores.get(skill_id, 0.0),
                                          "finished": req.finished})
            answer.pruned.append(skill_id)
        for survivor_id, absorbed_id in plan.merges:
            survivor, absorbed = merge(by_id[survivor_id], by_id[absorbed_id])
            by_id[survivor_id], by_id[absorbed_id] = survivor, absorbed  # it may merge again
            await self.store.save_many([survivor, absorbed], by="maintenance", action="merged")
            answer.merged[absorbed_id] = survivor_id
        answer.refused_merges = [f"{a} + {b}: {why}" for a, b, why in plan.refused]
        answer.undecided = [MergeCandidate(first=brief(by_id[a]), second=brief(by_id[b]),
                                           similarity=min(1.0, max(0.0, sim)))
                            for a, b, sim in plan.undecided[:MAX_JUDGED]]
        await self._synced()  # re-embed the merged survivors, drop what was retired
        return answer


def batch_key(outcomes: Sequence[TaskOutcome]) -> str:
    """A digest of a batch's outcome keys: the same batch always gets the same one."""
    import hashlib

    return hashlib.sha256("\n".join(sorted(o.key for o in outcomes)).encode()).hexdigest()[:24]
