"""Recalling memory for a planner (reflection pool): the rules and episodes that apply to a goal.

``recall_memory`` turns memory's active semantic rules and failed episodes into short notes
for the planner's "what earlier runs taught" (:mod:`workflows.contracts.recall` says when a
task type applies). Rules come first, most relevant and most confident first; then failed
attempts, grouped by task type and root cause with how often they were fixed and with what (a
failure a rule already covers is left to the rule). Memory switched off, or a slow index,
gives fewer notes, never an error.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from activities.memory.index import TaskTypeIndex
from activities.memory.store import MemoryStore
from activities.metrics import record
from workflows.catalogue import RECALL_MEMORY
from workflows.contracts.kinds import kind_parts, named_families
from workflows.contracts.memory import Episode, MemoryRule
from workflows.contracts.plaintext import clip
from workflows.contracts.recall import NOTE_CHARS, RecallAnswer, RecallInput
from workflows.contracts.words import STOP_WORDS, slug_words, stem

EPISODES_READ = 200
"""The newest episodes read to find failures that apply (memory prunes to ~100 a type)."""
FAILED = frozenset({"failure", "fixed", "unfixed"})

__all__ = ["RECALL_MEMORY", "Recall", "applies", "topic_stems"]


def topic_stems(texts: Iterable[str]) -> set[str]:
    """The stems of the significant words of ``texts`` (stop words dropped)."""
    return {stem(w) for text in texts for w in slug_words(text) if w not in STOP_WORDS}


_NOT_TOPICS = frozenset({"task", "analysis"})
"""Words of a kind that say nothing of its topic."""


def applies(task_type: str, stems: set[str], families: Iterable[str] = ()) -> float:
    """How well a task kind fits the topics: 1 when they name its analysis, else a share.

    ``families`` are the analysis families the topics name
    (:func:`~workflows.contracts.kinds.named_families`): a kind of one of them, or of a more
    specific one, fits fully. Otherwise a kind fits when at least half the words of its
    parts, and at least two (its only one, for a one-word kind), are among ``stems``.
    """
    family = kind_parts(task_type)[0].split("+")[0]
    if any(family == f or family.startswith(f + ".") for f in families):
        return 1.0
    words = {stem(w) for w in slug_words(task_type) if w not in _NOT_TOPICS}
    hit = len(words & stems)
    if not words or hit < min(2, len(words)) or 2 * hit < len(words):
        return 0.0
    return round(hit / len(words), 4)


class Recall:
    """The ``recall_memory`` activity over a :class:`MemoryStore` (``None``: memory is off).

    Args:
        store: the open memory store.
        index: similar task types in Qdrant (``None``: word matching only).
    """

    def __init__(self, store: MemoryStore | None, *, index: TaskTypeIndex | None = None,
                 ) -> None:
        self.store = store
        self.index = index

    @RECALL_MEMORY.defn
    async def recall_memory(self, req: RecallInput) -> RecallAnswer:
        """Notes from the rules and episodes that apply to ``req``'s goal and topics."""
        if self.store is None or req.max_notes == 0:
            return RecallAnswer()
        answer = RecallAnswer()
        rules, answer.warnings = await self.store.rules(statuses=("active",))
        episodes = [e for e in await self.store.episodes(limit=EPISODES_READ)
                    if e.outcome in FAILED and e.root_cause]
        fit = await self._fit(req, {r.task_type for r in rules} | {e.task_type
                                                                   for e in episodes},
                              answer.warnings)
        chosen = sorted((r for r in rules if r.task_type in fit),
                        key=lambda r: (-fit[r.task_type], -r.confidence, r.rule_id))
        notes = [(rule_note(r), r.rule_id) for r in chosen]
        ruled = {(r.task_type, r.root_cause) for r in chosen}
        notes += [(note, "") for note in failure_notes(
            [e for e in episodes if e.task_type in fit
             and (e.task_type, e.root_cause) not in ruled], fit)]
        kept = notes[:req.max_notes]
        answer.notes = [clip(note, NOTE_CHARS) for note, _ in kept]
        answer.rules = [rule_id for _, rule_id in kept if rule_id]
        answer.task_types = sorted(fit, key=lambda t: (-fit[t], t))
        record.memory_looked_up("recall", found=bool(answer.notes))
        return answer

    async def _fit(self, req: RecallInput, types: set[str],
                   warnings: list[str]) -> dict[str, float]:
        """The task types that apply, with how well: by words, then by the index."""
        stems = topic_stems([req.goal, *req.topics])
        families = named_families(" ".join([req.goal, *req.topics]))
        fit = {t: score for t in sorted(types)
               if (score := applies(t, stems, families)) > 0}
        if self.index is None:
            return fit
        try:
            similar = await self.index.similar(req.goal)
        except Exception as err:  # the index only widens matching; words still match
            warnings.append(f"similar task types not searched: {type(err).__name__}: {err}")
            return fit
        for kind, score in similar:
            if kind in types:
                fit[kind] = max(fit.get(kind, 0.0), score)
        return fit


def rule_note(rule: MemoryRule) -> str:
    """A rule as one note: where it applies, how sure memory is, what it saw and the fix."""
    rec = rule.recommendation
    fix = ", ".join(f"{name} {rec.limits.get(name, 'set')} {value!r}"
                    for name, value in rec.parameters.items())
    return (f"rule {rule.rule_id} for tasks like '{rule.task_type}' (confidence "
            f"{rule.confidence:.2f}; {rule.success_count} successes, {rule.failure_count} "
            f"failures since): {rule.observation} Fix that worked: {rec.action} ({fix}).")


def failure_notes(episodes: list[Episode], fit: dict[str, float]) -> list[str]:
    """Failed attempts grouped by task type and root cause: how often, fixed how."""
    groups: dict[tuple[str, str], list[Episode]] = defaultdict(list[Episode])
    for episode in episodes:
        groups[(episode.task_type, episode.root_cause)].append(episode)
    order = sorted(groups, key=lambda k: (-fit.get(k[0], 0.0), -len(groups[k]), k))
    notes: list[str] = []
    for kind, cause in order:
        seen = groups[(kind, cause)]
        fixed = [e for e in seen if e.outcome == "fixed"]
        fixes = sorted({f"{name} = {value!r}" for e in fixed for name, value in e.fix.items()})
        how = f" (with {', '.join(fixes)})" if fixes else ""
        notes.append(f"tasks like '{kind}' failed {len(seen)} time{'s' * (len(seen) != 1)} "
                     f"with root cause {cause}: {len(fixed)} fixed{how}, "
                     f"{len(seen) - len(fixed)} not.")
    return notes
