"""Retrieval of skill patterns: dense and BM25 rankings from a vector index, fused by rank.

A goal or a task's action is matched against the library's patterns: several
reformulations of it are searched, each ranked by meaning (static word embeddings) and by
words (field-weighted BM25, ``lexical``), all in one batch. A pattern's score sums
``WEIGHTS[ranking] / (RRF_K + rank)`` over every ranking it appears in (reciprocal rank
fusion); its similarity is its best dense cosine to any reformulation. Those under θ are
dropped (but a best match by words needs only half of θ), maximal marginal relevance picks
the top k, so near-duplicate patterns do not crowd out the alternatives, and the hits are
returned by score.

The points live in an ``activities.vectors`` index: a Qdrant Edge shard in a directory (the
real engine, in this process, with no server) or a Qdrant server's collection shared by every
worker. A point's id derives from its skill id, so re-indexing a skill, from any worker,
replaces its point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import numpy as np
import numpy.typing as npt

from activities.vectors import (
    EdgeIndex,
    Found,
    Layout,
    Point,
    Query,
    Sparse,
    Vector,
    VectorIndex,
    stable_id,
)
from skills.index import lexical
from skills.index.embed import DIM, Embedder, Vectors
from skills.index.text import clean, skill_text
from workflows.library.patterns import Skill

DENSE = "dense"
SPARSE = "bm25"
CANDIDATES = 50
"""Fused candidates per reformulation (at least twice ``top_k``)."""
RRF_K = 60
"""k of reciprocal rank fusion: 1 / (k + rank)."""
WEIGHTS = {DENSE: 0.5, SPARSE: 1.0}
"""Weight of each ranking in the fusion: ``WEIGHTS[name] / (RRF_K + rank)``, ranks from 0.
Words count double: a name or description that says what was asked is the surer sign."""
LEXICAL_TOP = 3
"""The best this many by words of the query as written need only half of θ: a name or
description that says what was asked is a match even when its long text dilutes the cosine."""
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
        fused: its score, by which hits are ordered: ``WEIGHTS[ranking] / (RRF_K + rank)``
            summed over the dense and the BM25 ranking of every query it appears in.
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
        dense = self.embedder.embed([skill_text(skill.pattern) for skill in latest.values()])
        self.vectors.upsert([Point(point_id(sid), {
            DENSE: vector.tolist(), SPARSE: Sparse(*lexical.document(skill.pattern))}, {
                "skill_id": sid, "name": skill.pattern.name, "status": skill.status,
                "kind": skill.pattern.kind})
            for (sid, skill), vector in zip(latest.items(), dense, strict=True)])

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
               statuses: Sequence[str] | None = ("active", "trial"),
               using: Sequence[str] = (DENSE, SPARSE)) -> list[Hit]:
        """The patterns that fit any of ``queries``, most relevant first.

        Every query is ranked by meaning (dense cosine) and by words (field-weighted BM25);
        a pattern's score fuses its ranks in all of these rankings by reciprocal rank
        (``WEIGHTS`` per ranking). A pattern is kept when its similarity reaches θ, or half
        of θ when it is among the best ``LEXICAL_TOP`` by words of the query as written; maximal
        marginal relevance picks the top k, so near-duplicate patterns do not crowd out the
        alternatives, and they are returned by score.

        Args:
            queries: reformulations of one goal or action (see ``reformulate``).
            top_k: at most this many hits.
            threshold: θ, the least similarity (best dense cosine to a query) of a hit
                found by meaning.
            mmr_lambda: λ of maximal marginal relevance; 1 keeps the best scores alone.
            statuses: only patterns of these statuses; ``None``: any status.
            using: the rankings fused: ``DENSE``, ``SPARSE`` or both.

        Returns:
            Hits by score, best first; ties go to the smaller skill id.

        Raises:
            ValueError: no non-blank query, or an option out of range.
        """
        texts = [t for t in dict.fromkeys(clean(q) for q in queries) if t]
        _check(texts, queries, top_k, mmr_lambda, statuses, using)
        asked = self.embedder.embed(texts)
        pool, strong = self._candidates(texts, asked, max(CANDIDATES, 2 * top_k), statuses,
                                         using)
        if not pool:
            return []
        ids = sorted(pool)
        vectors = np.stack([pool[s][0] for s in ids])
        scores = np.array([pool[s][1] for s in ids])
        # in float64: BLAS rounds a float32 product differently by a row's place in the
        # batch, which would make equal patterns' similarities differ in the last digit
        sims = (asked.astype(np.float64) @ vectors.astype(np.float64).T).max(axis=0)
        keep = [i for i, sid in enumerate(ids) if sims[i] >= threshold or DENSE not in using
                or (sid in strong and sims[i] >= threshold / 2)]
        relevance = scores[keep] / scores.max()
        chosen = [keep[i] for i in _mmr(relevance, vectors[keep], top_k, mmr_lambda)]
        chosen.sort(key=lambda i: (-scores[i], ids[i]))
        return [Hit(ids[i], round(float(sims[i]), 6), round(float(scores[i]), 6))
                for i in chosen]

    def _candidates(self, texts: list[str], dense: Vectors, limit: int,
                    statuses: Sequence[str] | None, using: Sequence[str],
                    ) -> tuple[dict[str, tuple[Vectors, float]], set[str]]:
        """Each candidate's dense vector and fused score, over one batch of queries.

        Also the best ``LEXICAL_TOP`` by words of the first query: what was asked, as written.
        """
        where = None if statuses is None else {"status": list(statuses)}
        batch: list[tuple[str, Query]] = []
        for text, vector in zip(texts, dense, strict=True):
            asked: list[tuple[str, Vector]] = []
            if DENSE in using:
                asked.append((DENSE, vector.tolist()))
            words = Sparse(*lexical.query(text))
            if SPARSE in using and words.indices:
                asked.append((SPARSE, words))
            batch += [(name, Query(nearest=[(name, v)], limit=limit, where=where,
                                   payload=["skill_id"], vectors=[DENSE])) for name, v in asked]
        pool: dict[str, tuple[Vectors, float]] = {}
        strong: set[str] = set()
        first_words = True
        for (name, _), result in zip(batch, self.vectors.query([q for _, q in batch]),
                                     strict=True):
            rank, last = 0, float("nan")
            for place, point in enumerate(result):  # equal scores share a rank
                if not math.isclose(point.score, last, rel_tol=1e-5):
                    rank, last = place, point.score
                sid = str(point.payload["skill_id"])
                add = WEIGHTS[name] / (RRF_K + rank)
                pool[sid] = (_dense(point), pool[sid][1] + add if sid in pool else add)
                if name == SPARSE and first_words and rank < LEXICAL_TOP:
                    strong.add(sid)
            first_words = first_words and name != SPARSE
        return pool, strong


def _dense(point: Found) -> Vectors:
    """The dense vector returned with a point."""
    return np.asarray(point.vectors[DENSE], dtype=np.float32)


def _check(texts: list[str], queries: Sequence[str], top_k: int, mmr_lambda: float,
           statuses: Sequence[str] | None, using: Sequence[str]) -> None:
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
    if not using or any(name not in WEIGHTS for name in using):
        raise ValueError(f"using names the rankings to fuse: {DENSE!r}, {SPARSE!r} or both, "
                         f"not {list(using)!r}")


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
