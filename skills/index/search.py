"""Retrieval of skill patterns: dense and BM25 vectors in a vector index, searched hybrid.

A goal or a task's action is matched against the library's patterns (DESIGN §8): several
reformulations of it are searched, each as one hybrid Qdrant query whose dense (static word
embeddings) and sparse (BM25) candidates Qdrant fuses by reciprocal rank. The candidates of
every reformulation are pooled; a pattern's similarity is its best dense cosine to any
reformulation; those under θ are dropped and maximal marginal relevance picks the top k, so
near-duplicate patterns do not crowd out the alternatives.

The points live in an ``activities.vectors`` index: a Qdrant Edge shard in a directory (the
real engine, in this process, with no server) or a Qdrant server's collection shared by every
worker. A point's id derives from its skill id, so re-indexing a skill, from any worker,
replaces its point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import numpy as np
import numpy.typing as npt
import qdrant_edge as qe

from activities.vectors import (
    EdgeIndex,
    Found,
    Layout,
    Point,
    Query,
    Sparse,
    VectorIndex,
    stable_id,
)
from skills.index.embed import DIM, Embedder, Vectors
from skills.index.text import clean, skill_text
from workflows.library.patterns import Skill

DENSE = "dense"
SPARSE = "bm25"
CANDIDATES = 50
"""Fused candidates per reformulation (at least twice ``top_k``)."""
RRF_K = 60
"""k of reciprocal rank fusion: 1 / (k + rank)."""
AVG_TOKENS = 40
"""Typical length of a pattern's text in BM25 tokens (its length normalisation)."""
COLLECTION = "assay_skills"
"""The skill index's collection on a Qdrant server."""
LAYOUT = Layout(dense={DENSE: DIM}, sparse={SPARSE: True}, keywords=("status",))
"""Dense cosine vectors, BM25 term weights scored with the collection's IDF, status filter."""
_IDS = "assay:skill-index"


@dataclass(frozen=True)
class Hit:
    """A retrieved pattern.

    Attributes:
        skill_id: the pattern's ``name@vN``.
        similarity: its best dense cosine to any of the queries (what θ and MMR use).
        fused: its best reciprocal-rank-fusion score from Qdrant over the queries: the sum of
            ``1 / (RRF_K + rank)`` over the dense and the BM25 rankings it appears in.
    """

    skill_id: str
    similarity: float
    fused: float


def point_id(skill_id: str) -> str:
    """The stable Qdrant point id (a UUID) of a skill id, the same in every worker."""
    return stable_id(_IDS, skill_id)


class SkillIndex:
    """The library's patterns in a vector index, searchable by goal or action.

    Args:
        where: a directory, for a Qdrant Edge shard of this process (created empty when it
            holds none), or an open vector index (a server's collection: ``LAYOUT``).
        embedder: dense vectors of texts (the shared wordllama model by default).

    Raises:
        RuntimeError: the directory's shard is open in another index or process.
    """

    def __init__(self, where: Path | VectorIndex, *, embedder: Embedder | None = None) -> None:
        self.vectors: VectorIndex = EdgeIndex(where, LAYOUT) if isinstance(where, Path) else where
        self.embedder = embedder or Embedder()
        self._bm25 = qe.Bm25(qe.Bm25Config(avg_len=AVG_TOKENS))

    def close(self) -> None:
        """Close the index (a second close does nothing)."""
        self.vectors.close()

    def __enter__(self) -> SkillIndex:
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __len__(self) -> int:
        return self.vectors.count()

    def ids(self) -> set[str]:
        """The skill ids in the index."""
        return {str(found.payload["skill_id"]) for found in self.vectors.scroll(
            payload=["skill_id"])}

    def upsert(self, skills: Sequence[Skill]) -> None:
        """Index ``skills``, replacing any earlier point of the same skill id."""
        latest = {skill.skill_id: skill for skill in skills}
        if not latest:
            return
        texts = [skill_text(skill.pattern) for skill in latest.values()]
        dense = self.embedder.embed(texts)
        self.vectors.upsert([Point(point_id(sid), {
            DENSE: vector.tolist(), SPARSE: _sparse(self._bm25.embed_document(text))}, {
                "skill_id": sid, "name": skill.pattern.name, "status": skill.status,
                "kind": skill.pattern.kind})
            for (sid, skill), text, vector in zip(latest.items(), texts, dense, strict=True)])

    def remove(self, skill_ids: Sequence[str]) -> None:
        """Drop these skills from the index; ids it does not hold are ignored."""
        self.vectors.delete([point_id(s) for s in skill_ids])

    def similarity(self, a: str, b: str) -> float:
        """Dense cosine between two indexed patterns.

        Raises:
            KeyError: either skill is not in the index.
        """
        found = {str(r.payload["skill_id"]): r for r in self.vectors.retrieve(
            [point_id(a), point_id(b)], payload=["skill_id"], vectors=[DENSE])}
        missing = [s for s in (a, b) if s not in found]
        if missing:
            raise KeyError(f"skill {missing[0]!r} is not in the skill index at "
                           f"{self.vectors.where}")
        va, vb = (_dense(found[s]) for s in (a, b))
        return float(np.dot(va, vb))

    def search(self, queries: Sequence[str], *, top_k: int = 20, threshold: float = 0.5,
               mmr_lambda: float = 0.7,
               statuses: Sequence[str] | None = ("active", "trial")) -> list[Hit]:
        """The patterns that fit any of ``queries``, by relevance and diversity.

        Args:
            queries: reformulations of one goal or action (see ``reformulate``).
            top_k: at most this many hits.
            threshold: θ, the least similarity (best dense cosine to a query) of a hit.
            mmr_lambda: λ of maximal marginal relevance; 1 orders by similarity alone.
            statuses: only patterns of these statuses; ``None``: any status.

        Returns:
            Hits in the order MMR selected them; ties go to the smaller skill id.

        Raises:
            ValueError: no non-blank query, or an option out of range.
        """
        texts = [t for t in dict.fromkeys(clean(q) for q in queries) if t]
        _check(texts, queries, top_k, mmr_lambda, statuses)
        asked = self.embedder.embed(texts)
        pool = self._candidates(texts, asked, max(CANDIDATES, 2 * top_k), statuses)
        if not pool:
            return []
        ids = sorted(pool)
        vectors = np.stack([pool[s][0] for s in ids])
        # in float64: BLAS rounds a float32 product differently by a row's place in the
        # batch, which would make equal patterns' similarities differ in the last digit
        sims = (asked.astype(np.float64) @ vectors.astype(np.float64).T).max(axis=0)
        keep = [int(i) for i in np.flatnonzero(sims >= threshold)]
        chosen = [keep[i] for i in _mmr(sims[keep], vectors[keep], top_k, mmr_lambda)]
        return [Hit(ids[i], round(float(sims[i]), 6), pool[ids[i]][1]) for i in chosen]

    def _candidates(self, texts: list[str], dense: Vectors, limit: int,
                    statuses: Sequence[str] | None) -> dict[str, tuple[Vectors, float]]:
        """Each candidate's dense vector and best fused score, over one batch of hybrid queries.

        The status filter is given once, on the fusion: Qdrant applies it to both prefetches.
        """
        where = None if statuses is None else {"status": list(statuses)}
        batch = [Query(nearest=[(DENSE, vector.tolist()),
                                (SPARSE, _sparse(self._bm25.embed_query(text)))],
                       limit=limit, where=where, payload=["skill_id"], vectors=[DENSE],
                       rrf_k=RRF_K)
                 for text, vector in zip(texts, dense, strict=True)]
        pool: dict[str, tuple[Vectors, float]] = {}
        for result in self.vectors.query(batch):
            for point in result:
                sid = str(point.payload["skill_id"])
                best = max(point.score, pool[sid][1]) if sid in pool else point.score
                pool[sid] = (_dense(point), best)
        return pool


def _sparse(vector: qe.SparseVector) -> Sparse:
    """The engine's BM25 vector as the index's sparse vector."""
    return Sparse(list(vector.indices), list(vector.values))


def _dense(point: Found) -> Vectors:
    """The dense vector returned with a point."""
    return np.asarray(point.vectors[DENSE], dtype=np.float32)


def _check(texts: list[str], queries: Sequence[str], top_k: int, mmr_lambda: float,
           statuses: Sequence[str] | None) -> None:
    if isinstance(queries, str):
        raise ValueError("search takes a list of queries, not one string: wrap it in a list")
    if not texts:
        raise ValueError(f"search needs at least one non-blank query, got {list(queries)[:4]!r}")
    if top_k < 1:
        raise ValueError(f"top_k must be 1 or more, not {top_k}")
    if not 0.0 <= mmr_lambda <= 1.0:
        raise ValueError(f"mmr_lambda must be between 0 and 1, not {mmr_lambda}")
    if statuses is not None and (isinstance(statuses, str) or not statuses):
        raise ValueError(f"statuses must be a non-empty list of statuses or None, "
                         f"not {statuses!r}")


def _mmr(sims: npt.NDArray[np.float64], vectors: Vectors, top_k: int,
         lam: float) -> list[int]:
    """Indices picked by MMR: λ·sim - (1-λ)·(max cosine to those picked), first index on ties."""
    chosen: list[int] = []
    if not len(sims):
        return chosen
    penalty = np.zeros(len(sims), dtype=np.float32)
    left = np.ones(len(sims), dtype=bool)
    for _ in range(min(top_k, len(sims))):
        score = np.where(left, lam * sims - (1.0 - lam) * penalty, -np.inf)
        best = int(np.argmax(score))
        chosen.append(best)
        left[best] = False
        penalty = np.maximum(penalty, vectors @ vectors[best])
    return chosen
