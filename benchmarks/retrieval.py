"""Retrieval quality on a collection shaped like the public Agent Skills ones.

``tests/data/skills/collection/`` holds skill folders (``SKILL.md``: a name, a description in
the public collections' style, a body), imported as a person would import them (candidates);
``collection_queries.json`` holds scientists' requests, each with the skills that answer it.
``evaluate`` reports recall@5 and MRR of a search over them; ``quality`` measures, on the
same index:

- *before*: the search as it was: one hybrid query per reformulation of the pattern's name,
  description and context (unweighted BM25 of the engine's tokeniser, capitals folded and
  stemmed), fused by Qdrant, then θ and MMR on the dense cosine alone, hits in MMR order;
- *BM25 alone* and *dense alone*: one ranking each, every reformulation fused by rank;
- *shipped*: ``SkillIndex.search`` (field-weighted BM25 and dense, fused by reciprocal rank).

Every search is over every status (an imported collection is all candidates), with the
policy's reformulations, θ, top k and λ.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import qdrant_edge as qe

from activities.vectors import Point, Query, Sparse
from skills.folders import import_skills
from skills.index import DENSE, RRF_K, SPARSE, Hit, SkillIndex, point_id, reformulate
from skills.index.search import _dense, _mmr  # pyright: ignore[reportPrivateUsage]
from skills.index.text import clean, skill_text
from workflows.contracts.patterns import Skill
from workflows.contracts.policy import SkillPolicy

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "skills"
COLLECTION = DATA / "collection"
QUERIES = DATA / "collection_queries.json"
AT = 5
"""recall@AT."""

Search = Callable[[str], list[str]]


@dataclass(frozen=True)
class Quality:
    """How well a search ranks the labelled queries' skills."""

    recall_at_5: float
    mrr: float
    misses: list[str]
    """Queries none of whose skills is in the first five."""


def labelled() -> list[tuple[str, list[str]]]:
    """The labelled queries: (request, names of the skills that answer it)."""
    return [(q["query"], q["relevant"]) for q in json.loads(QUERIES.read_text())]


def collection() -> list[Skill]:
    """The collection's folders, imported as candidates."""
    return import_skills(COLLECTION)


def evaluate(search: Search, queries: Sequence[tuple[str, list[str]]]) -> Quality:
    """Recall@5 and mean reciprocal rank of ``search`` (names, best first) on ``queries``."""
    recall: list[float] = []
    reciprocal: list[float] = []
    misses: list[str] = []
    for query, relevant in queries:
        ranked = search(query)
        found = set(relevant) & set(ranked[:AT])
        recall.append(len(found) / len(relevant))
        if not found:
            misses.append(query)
        rank = next((i for i, name in enumerate(ranked, 1) if name in relevant), None)
        reciprocal.append(1 / rank if rank else 0.0)
    return Quality(statistics.fmean(recall), statistics.fmean(reciprocal), misses)


def names(hits: Sequence[Hit]) -> list[str]:
    """The skill names of hits, in order."""
    return [hit.skill_id.split("@", 1)[0] for hit in hits]


def shipped(index: SkillIndex, threshold: float,
            using: Sequence[str] = (DENSE, SPARSE)) -> Search:
    """``SkillIndex.search`` with the policy's settings at θ ``threshold``, fusing ``using``."""
    policy = SkillPolicy()

    def search(query: str) -> list[str]:
        return names(index.search(reformulate(query, policy.queries), top_k=policy.top_k,
                                  threshold=threshold, mmr_lambda=policy.mmr_lambda,
                                  statuses=None, using=using))

    return search


class Before:
    """The search as it was, over its own points: the engine's BM25 of the pattern's text."""

    def __init__(self, root: Path, skills: Sequence[Skill]) -> None:
        self.index = SkillIndex(root)
        self.bm25 = qe.Bm25(qe.Bm25Config(avg_len=40))
        texts = [skill_text(skill.pattern) for skill in skills]
        dense = self.index.embedder.embed(texts)
        self.index.vectors.upsert([Point(point_id(s.skill_id), {
            DENSE: vector.tolist(), SPARSE: self._sparse(self.bm25.embed_document(text))},
            {"skill_id": s.skill_id, "status": s.status})
            for s, text, vector in zip(skills, texts, dense, strict=True)])

    @staticmethod
    def _sparse(vector: qe.SparseVector) -> Sparse:
        return Sparse(list(vector.indices), list(vector.values))

    def search(self, query: str, threshold: float) -> list[str]:
        """The old pipeline: Qdrant's fusion per reformulation, θ and MMR on the cosine."""
        policy = SkillPolicy()
        texts = [t for t in dict.fromkeys(clean(q) for q in reformulate(
            query, policy.queries)) if t]
        asked = self.index.embedder.embed(texts)
        batch = [Query(nearest=[(DENSE, vector.tolist()),
                                (SPARSE, self._sparse(self.bm25.embed_query(text)))],
                       limit=50, payload=["skill_id"], vectors=[DENSE], rrf_k=RRF_K)
                 for text, vector in zip(texts, asked, strict=True)]
        pool = {str(p.payload["skill_id"]): _dense(p)
                for result in self.index.vectors.query(batch) for p in result}
        ids = sorted(pool)
        vectors = np.stack([pool[s] for s in ids])
        sims = (asked.astype(np.float64) @ vectors.astype(np.float64).T).max(axis=0)
        keep = [int(i) for i in np.flatnonzero(sims >= threshold)]
        chosen = [keep[i] for i in _mmr(sims[keep], vectors[keep], policy.top_k,
                                        policy.mmr_lambda)]
        return [ids[i].split("@", 1)[0] for i in chosen]


def quality(root: Path) -> dict[str, Quality]:
    """Every way of searching the collection, measured on the labelled queries."""
    skills, queries = collection(), labelled()
    theta = SkillPolicy().threshold
    before = Before(root / "before", skills)
    try:
        out = {f"before, θ {t:g}": evaluate(lambda q, t=t: before.search(q, t), queries)
               for t in (0.0, theta)}
    finally:
        before.index.close()
    with SkillIndex(root / "shipped") as index:
        index.upsert(skills)
        out["BM25 alone (field-weighted), θ 0"] = evaluate(shipped(index, 0, (SPARSE,)),
                                                            queries)
        out["dense alone, θ 0"] = evaluate(shipped(index, 0, (DENSE,)), queries)
        out["shipped, θ 0"] = evaluate(shipped(index, 0), queries)
        out[f"shipped, θ {theta:g}"] = evaluate(shipped(index, theta), queries)
    return out


def print_quality(figures: dict[str, Quality], skills: int, queries: int) -> None:
    """The table: one line per way of searching."""
    print(f"   {skills} skill folders, {queries} labelled queries "
          "(tests/data/skills/collection)")
    print(f"     {'':36}{'recall@5':>10}{'MRR':>7}{'missed':>8}")
    for name, q in figures.items():
        print(f"     {name:36}{q.recall_at_5:10.3f}{q.mrr:7.3f}{len(q.misses):8d}")
