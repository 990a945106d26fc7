"""Similar task types in a vector index: memory for work worded differently from what it has seen.

Rules and templates are keyed by task type, a slug of the action; an action worded a little
differently ("Train the model in small batches") has another slug. The index keeps one point
per task type that memory knows something about, with a sparse vector of its action's words
(hashed, L2-normalised, so Qdrant's dot product is the cosine), and finds the closest known
type above a threshold. The points live in an ``activities.vectors`` index: a Qdrant Edge
shard in a directory (the engine in this process, as the skill index uses; ``in_directory``
carries an index kept by an earlier release in qdrant-client's local mode over on its first
open, see ``carry``), or a Qdrant server's collection, which every reflection worker reads
and writes. Consulting it is best effort: without an index, memory matches exact task types
only.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import struct
import uuid
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, cast

from activities.vectors import ClientIndex, Found, Layout, Point, Query, Sparse, VectorIndex

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

COLLECTION = "assay_memory_task_types"
SHARD = "task-types"
"""The shard's directory under Qdrant's storage directory (``Settings.qdrant_dir``)."""
VECTOR = "words"
MIN_SIMILARITY = 0.75
"""Cosine of two actions' word vectors above which their task types are taken as one."""
LIMIT = 5
"""Closest task types considered, before the threshold and the excluded type drop some."""
WEIGHTS = "weights"
"""Payload field of a point's word vector at full precision (the engine keeps single)."""
_MARGIN = 15
_SLACK = 1e-5
"""More than single precision's error on a dot product of unit vectors."""
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
        vectors: the index holding the points (``LAYOUT``); see ``in_directory`` and
            ``on_client``.
    """

    def __init__(self, vectors: VectorIndex) -> None:
        self.vectors = vectors

    @classmethod
    def on_client(cls, client: QdrantClient) -> TaskTypeIndex:
        """The index in ``COLLECTION`` of an open Qdrant client (a server or local mode)."""
        return cls(ClientIndex(client, COLLECTION, LAYOUT))

    @classmethod
    def in_directory(cls, storage: Path) -> TaskTypeIndex:
        """The index in the shard ``storage / SHARD``, this process's own.

        On its first open, the points of ``COLLECTION`` in qdrant-client's local storage at
        ``storage`` (where an earlier release kept them) are carried over, vectors as stored.

        Raises:
            RuntimeError: the shard is open in another process, or the old storage to carry
                over cannot be read; no shard is left half made.
        """
        from activities.memory.carry import opened

        return cls(opened(storage / SHARD, storage))

    def close(self) -> None:
        """Close the index (a second close does nothing)."""
        self.vectors.close()

    async def add(self, task_type: str, action: str) -> None:
        """Index a task type (idempotent: one point per type)."""
        await asyncio.to_thread(self._add, task_type, action)

    def _add(self, task_type: str, action: str) -> None:
        indices, values = word_vector(action)
        if indices:
            self.vectors.upsert([type_point(task_type, action[:500], Sparse(indices, values))])

    async def similar(self, action: str, *, exclude: str = "",
                      min_score: float = MIN_SIMILARITY) -> list[tuple[str, float]]:
        """Known task types whose action reads like ``action``, closest first.

        The best ``LIMIT`` types by score, ties by name, then those under ``min_score`` and
        ``exclude`` dropped; scores rounded to four places.
        """
        return await asyncio.to_thread(self._similar, action, exclude, min_score)

    def _similar(self, action: str, exclude: str, min_score: float) -> list[tuple[str, float]]:
        indices, values = word_vector(action)
        if not indices:
            return []
        best = self._closest(Sparse(indices, values))
        return [(kind, round(score, 4)) for kind, score in best
                if score >= min_score and kind not in ("", exclude)]

    def _closest(self, query: Sparse) -> list[tuple[str, float]]:
        """The ``LIMIT`` closest task types, exact scores, ties by name.

        The engine ranks in single precision; its candidates are rescored exactly
        (``exact_score``), asking for more while a candidate it left out could still tie.
        """
        limit = LIMIT + _MARGIN
        while True:
            (found,) = self.vectors.query([Query(nearest=[(VECTOR, query)], limit=limit)])
            scored = sorted((-score, str(p.payload.get("task_type", ""))) for p in found
                            if (score := exact_score(query, p)) is not None)
            best = [(kind, -negated) for negated, kind in scored[:LIMIT]]
            if len(found) < limit or not best or found[-1].score < best[-1][1] - _SLACK:
                return best
            limit *= 4


def type_point(task_type: str, action: str, vector: Sparse) -> Point:
    """The point of a task type: its words' vector, also kept at full precision in the payload."""
    return Point(type_point_id(task_type), {VECTOR: vector},
                 {"task_type": task_type, "action": action,
                  WEIGHTS: {"indices": list(vector.indices), "values": list(vector.values)}})


def exact_score(query: Sparse, found: Found) -> float | None:
    """The dot product of ``query`` and a found point's stored weights, as a float32.

    Summed in double precision over the shared words in index order and rounded to single,
    as qdrant-client's local mode scored (so scores, and what passes a threshold, stay what
    they were); ``None`` when they share no word (no match, as there). A point without
    stored weights keeps the engine's score.
    """
    weights = found.payload.get(WEIGHTS)
    if not isinstance(weights, dict):
        return found.score
    stored = dict(zip(cast(list[int], weights["indices"]), cast(list[float], weights["values"]),
                      strict=True))
    shared = [(value, stored[index]) for index, value in zip(query.indices, query.values,
                                                              strict=True) if index in stored]
    total = 0.0
    for mine, theirs in shared:
        total += mine * theirs
    return _single(total) if shared else None


def _single(value: float) -> float:
    """``value`` rounded to the nearest single-precision float, as numpy's ``float32`` does.

    Without numpy: workflow sandboxes may import this module (a test's workflow through the
    tests' harness), and numpy's core loads once per process.
    """
    single: float = struct.unpack("f", struct.pack("f", value))[0]
    return single
