"""Similar task types in a vector index: memory for work worded differently from what it has seen.

Rules and templates are keyed by task type, a slug of the action; an action worded a little
differently ("Train the model in small batches") has another slug. The index keeps one point
per task type that memory knows something about, with a sparse vector of its action's words
(hashed, L2-normalised, so Qdrant's dot product is the cosine), and finds the closest known
type above a threshold. The points live in an ``activities.vectors`` index: Qdrant's local
storage, held by one process, or a Qdrant server's collection, which every reflection worker
reads and writes. Consulting it is best effort: without an index, memory matches exact task
types only.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import uuid
from collections import Counter
from typing import TYPE_CHECKING

from activities.vectors import ClientIndex, Layout, Point, Query, Sparse, VectorIndex

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

COLLECTION = "assay_memory_task_types"
VECTOR = "words"
MIN_SIMILARITY = 0.75
"""Cosine of two actions' word vectors above which their task types are taken as one."""
_WORD = re.compile(r"[a-z][a-z0-9]+")
_BUCKETS = 1 << 20
LAYOUT = Layout(sparse={VECTOR: False})
"""One sparse vector of hashed words, scored by its dot product (no IDF)."""


def word_vector(text: str) -> tuple[list[int], list[float]]:
    """Hashed word counts of ``text`` (words of two letters or more), L2-normalised."""
    counts = Counter(int.from_bytes(hashlib.blake2b(w.encode(), digest_size=8).digest(),
                                    "big") % _BUCKETS for w in _WORD.findall(text.lower()))
    norm = math.sqrt(sum(c * c for c in counts.values())) or 1.0
    indices = sorted(counts)
    return indices, [counts[i] / norm for i in indices]


def type_point_id(task_type: str) -> str:
    """The stable point id of a task type (one point per type, whoever indexes it)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"assay-task-type:{task_type}"))


class TaskTypeIndex:
    """Task types memory knows, searchable by the wording of a new action.

    Args:
        vectors: the index holding the points (``LAYOUT``); see ``on_client``.
    """

    def __init__(self, vectors: VectorIndex) -> None:
        self.vectors = vectors

    @classmethod
    def on_client(cls, client: QdrantClient) -> TaskTypeIndex:
        """The index in ``COLLECTION`` of an open Qdrant client (a server or local mode)."""
        return cls(ClientIndex(client, COLLECTION, LAYOUT))

    async def add(self, task_type: str, action: str) -> None:
        """Index a task type (idempotent: one point per type)."""
        await asyncio.to_thread(self._add, task_type, action)

    def _add(self, task_type: str, action: str) -> None:
        indices, values = word_vector(action)
        if indices:
            self.vectors.upsert([Point(type_point_id(task_type), {VECTOR: Sparse(indices, values)},
                                       {"task_type": task_type, "action": action[:500]})])

    async def similar(self, action: str, *, exclude: str = "",
                      min_score: float = MIN_SIMILARITY) -> list[tuple[str, float]]:
        """Known task types whose action reads like ``action``, closest first."""
        return await asyncio.to_thread(self._similar, action, exclude, min_score)

    def _similar(self, action: str, exclude: str, min_score: float) -> list[tuple[str, float]]:
        indices, values = word_vector(action)
        if not indices:
            return []
        (found,) = self.vectors.query([Query(nearest=[(VECTOR, Sparse(indices, values))],
                                             limit=5)])
        return [(str(p.payload.get("task_type", "")), round(p.score, 4))
                for p in found if p.score >= min_score
                and p.payload.get("task_type") not in ("", exclude)]
