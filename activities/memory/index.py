"""Similar task types in Qdrant: memory for work worded differently from what it has seen.

Rules and templates are keyed by task type, a slug of the action; an action worded a little
differently ("Train the model in small batches") has another slug. The index keeps one point
per task type that memory knows something about, with a sparse vector of its action's words
(hashed, L2-normalised, so Qdrant's dot product is the cosine), and finds the closest known
type above a threshold. Consulting it is best effort: without Qdrant, memory matches exact
task types only.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import uuid
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

COLLECTION = "assay_memory_task_types"
VECTOR = "words"
MIN_SIMILARITY = 0.75
"""Cosine of two actions' word vectors above which their task types are taken as one."""
_WORD = re.compile(r"[a-z][a-z0-9]+")
_BUCKETS = 1 << 20


def word_vector(text: str) -> tuple[list[int], list[float]]:
    """Hashed word counts of ``text`` (words of two letters or more), L2-normalised."""
    counts = Counter(int.from_bytes(hashlib.blake2b(w.encode(), digest_size=8).digest(),
                                    "big") % _BUCKETS for w in _WORD.findall(text.lower()))
    norm = math.sqrt(sum(c * c for c in counts.values())) or 1.0
    indices = sorted(counts)
    return indices, [counts[i] / norm for i in indices]


class TaskTypeIndex:
    """Task types memory knows, searchable by the wording of a new action.

    Args:
        client: an open Qdrant client (local mode or a server).
    """

    def __init__(self, client: QdrantClient) -> None:
        self.client = client
        self._ready = False

    def _ensure(self) -> None:
        from qdrant_client import models

        if self._ready:
            return
        if not self.client.collection_exists(COLLECTION):
            self.client.create_collection(
                COLLECTION, vectors_config={},
                sparse_vectors_config={VECTOR: models.SparseVectorParams()})
        self._ready = True

    async def add(self, task_type: str, action: str) -> None:
        """Index a task type (idempotent: one point per type)."""
        await asyncio.to_thread(self._add, task_type, action)

    def _add(self, task_type: str, action: str) -> None:
        from qdrant_client import models

        self._ensure()
        indices, values = word_vector(action)
        if not indices:
            return
        point = models.PointStruct(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"assay-task-type:{task_type}")),
            vector={VECTOR: models.SparseVector(indices=indices, values=values)},
            payload={"task_type": task_type, "action": action[:500]})
        self.client.upsert(COLLECTION, points=[point])

    async def similar(self, action: str, *, exclude: str = "",
                      min_score: float = MIN_SIMILARITY) -> list[tuple[str, float]]:
        """Known task types whose action reads like ``action``, closest first."""
        return await asyncio.to_thread(self._similar, action, exclude, min_score)

    def _similar(self, action: str, exclude: str, min_score: float) -> list[tuple[str, float]]:
        from qdrant_client import models

        self._ensure()
        indices, values = word_vector(action)
        if not indices:
            return []
        found = self.client.query_points(
            COLLECTION, query=models.SparseVector(indices=indices, values=values),
            using=VECTOR, limit=5, with_payload=True).points
        return [(str((p.payload or {}).get("task_type", "")), round(p.score, 4))
                for p in found if p.score >= min_score
                and (p.payload or {}).get("task_type") not in ("", exclude)]
