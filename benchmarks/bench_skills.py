"""Skill retrieval at 1 000 and 10 000 skills: latency and quality beside a plain dense search.

Assay's search (``SkillIndex.search``) embeds 4 reformulations of a goal, runs a dense and a
field-weighted BM25 Qdrant query per reformulation (in one batch), fuses their ranks by
weighted RRF, applies θ and picks the top 20 by MMR. The baseline, timed in the same run on the
same shard, embeds the goal as it is and asks Qdrant for its 20 nearest dense vectors. Both
are timed end to end, embedding included, on the labelled queries of
``tests/data/skills/queries.json`` repeated to at least 200 searches each, after one uncounted
pass. Quality is recall@5 and MRR on the same labelled queries (the targets: p50 ≤ 20 ms at
1 000 skills, ≤ 50 ms at 10 000). At the first size, the same search is timed on both vector
back-ends: the in-process engine (qdrant-edge) and a collection through qdrant-client, in
its local mode (no Qdrant server here: a server adds a network round trip per batch).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypedDict

from activities.vectors import Query
from skills.index import DENSE, Embedder, SkillIndex, reformulate
from tests.data.skills.library import make_library
from workflows.contracts.policy import SkillPolicy

QUERIES = Path(__file__).resolve().parent.parent / "tests" / "data" / "skills" / "queries.json"
TARGET_MS = {1000: 20.0, 10_000: 50.0}

Search = Callable[[str], list[str]]


class Labelled(TypedDict):
    """A goal as a user would write it and the skills that answer it."""

    query: str
    relevant: list[str]


class Figures(TypedDict):
    """One way of searching at one size."""

    p50_ms: float
    p95_ms: float
    recall_at_5: float
    mrr: float


class SizeFigures(TypedDict):
    """Everything measured at one library size."""

    skills: int
    generate_s: float
    build_s: float
    searches: int
    ways: dict[str, Figures]


def dense_baseline(index: SkillIndex, top_k: int) -> Search:
    """One dense Qdrant query of the goal as written, with the same status filter."""

    def search(goal: str) -> list[str]:
        vector = index.embedder.embed([goal])[0].tolist()
        (points,) = index.vectors.query([Query(
            nearest=[(DENSE, vector)], limit=top_k, where={"status": ["active", "trial"]},
            payload=["skill_id"])])
        return [str(p.payload["skill_id"]) for p in points]

    return search


def hybrid(index: SkillIndex, policy: SkillPolicy, threshold: float) -> Search:
    """Assay's search with the policy's reformulations, top k and λ, at ``threshold``."""

    def search(goal: str) -> list[str]:
        hits = index.search(reformulate(goal, policy.queries), top_k=policy.top_k,
                            threshold=threshold, mmr_lambda=policy.mmr_lambda)
        return [hit.skill_id for hit in hits]

    return search


def measure(search: Search, labelled: list[Labelled], searches: int) -> Figures:
    """Latency over ``searches`` calls (after one uncounted pass) and quality on ``labelled``."""
    goals = [q["query"] for q in labelled]
    recall: list[float] = []
    reciprocal: list[float] = []
    for q, ranked in zip(labelled, map(search, goals), strict=True):
        relevant = set(q["relevant"])
        recall.append(len(relevant & set(ranked[:5])) / len(relevant))
        rank = next((i for i, sid in enumerate(ranked, 1) if sid in relevant), None)
        reciprocal.append(1 / rank if rank else 0.0)
    took: list[float] = []
    while len(took) < searches:
        for goal in goals:
            start = time.perf_counter()
            search(goal)
            took.append((time.perf_counter() - start) * 1000)
    return Figures(p50_ms=statistics.median(took), p95_ms=percentile(took, 95),
                   recall_at_5=statistics.fmean(recall), mrr=statistics.fmean(reciprocal))


def percentile(values: Sequence[float], pct: float) -> float:
    """The ``pct``-th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered)) - 1))]


def measure_size(n: int, searches: int, root: Path) -> SizeFigures:
    """Build an index of ``n`` skills and measure every way of searching it."""
    start = time.perf_counter()
    library = make_library(n)
    generated = time.perf_counter() - start
    labelled: list[Labelled] = json.loads(QUERIES.read_text())
    policy = SkillPolicy()
    with SkillIndex(root / f"skills-{n}") as index:
        start = time.perf_counter()
        index.upsert(library)
        built = time.perf_counter() - start
        ways = {
            f"assay, {policy.queries} queries, θ {policy.threshold:g}":
                hybrid(index, policy, policy.threshold),
            f"assay, {policy.queries} queries, θ 0": hybrid(index, policy, 0.0),
            "baseline: dense, 1 query": dense_baseline(index, policy.top_k),
        }
        figures = {name: measure(search, labelled, searches) for name, search in ways.items()}
    return SizeFigures(skills=n, generate_s=generated, build_s=built, searches=searches,
                       ways=figures)


def print_size(size: SizeFigures, queries: int) -> None:
    """One size's block: build time, then latency and quality per way of searching."""
    n = size["skills"]
    print(f"   {n:,} skills: index built in {size['build_s']:.2f} s (embed, BM25, upsert; "
          f"library generated in {size['generate_s']:.2f} s); {size['searches']} searches "
          f"each, {queries} labelled queries; target p50 <= {TARGET_MS.get(n, 50.0):.0f} ms")
    print(f"     {'':32}{'p50 ms':>8}{'p95 ms':>8}{'recall@5':>10}{'MRR':>7}")
    for name, f in size["ways"].items():
        print(f"     {name:32}{f['p50_ms']:8.2f}{f['p95_ms']:8.2f}{f['recall_at_5']:10.3f}"
              f"{f['mrr']:7.3f}")


class BackendFigures(TypedDict):
    """Assay's search on one vector back-end."""

    build_s: float
    p50_ms: float
    p95_ms: float
    recall_at_5: float


def backends(root: Path) -> dict[str, Callable[[], SkillIndex]]:
    """The two ways a skills worker holds its index.

    A server's collection is reached through the client API; qdrant-client's local mode, in
    this process, stands in for the server.
    """
    from qdrant_client import QdrantClient

    from activities.vectors import ClientIndex
    from skills.index import COLLECTION, LAYOUT

    return {"edge, in-process engine": lambda: SkillIndex(root / "backend-edge"),
            "qdrant-client, local mode": lambda: SkillIndex(ClientIndex(
                QdrantClient(location=":memory:"), COLLECTION, LAYOUT))}


def measure_backends(n: int, searches: int, root: Path) -> dict[str, BackendFigures]:
    """Build an index of ``n`` skills on each back-end and time Assay's search on it."""
    library = make_library(n)
    labelled: list[Labelled] = json.loads(QUERIES.read_text())
    policy = SkillPolicy()
    out: dict[str, BackendFigures] = {}
    for name, opened in backends(root).items():
        with opened() as index:
            start = time.perf_counter()
            index.upsert(library)
            built = time.perf_counter() - start
            f = measure(hybrid(index, policy, policy.threshold), labelled, searches)
        out[name] = BackendFigures(build_s=built, p50_ms=f["p50_ms"], p95_ms=f["p95_ms"],
                                   recall_at_5=f["recall_at_5"])
    return out


def print_backends(n: int, figures: dict[str, BackendFigures]) -> None:
    """One line per back-end: build time, search latency, recall."""
    print(f"   back-ends at {n:,} skills (Assay's search, {SkillPolicy().queries} queries):")
    print(f"     {'':32}{'build s':>8}{'p50 ms':>8}{'p95 ms':>8}{'recall@5':>10}")
    for name, f in figures.items():
        print(f"     {name:32}{f['build_s']:8.2f}{f['p50_ms']:8.2f}{f['p95_ms']:8.2f}"
              f"{f['recall_at_5']:10.3f}")


def run(sizes: Sequence[int] = (1000, 10_000), searches: int = 200) -> list[SizeFigures]:
    """Measure and print every size; returns the figures.

    Args:
        sizes: library sizes to index.
        searches: timed searches per way of searching (the labelled queries, repeated).
    """
    queries = len(json.loads(QUERIES.read_text()))
    start = time.perf_counter()
    Embedder().embed(["load the model"])
    print(f"   embedding model loaded from its wheel in {time.perf_counter() - start:.2f} s")
    out: list[SizeFigures] = []
    with tempfile.TemporaryDirectory(prefix="assay-bench-skills-") as tmp:
        for n in sizes:
            out.append(measure_size(n, searches, Path(tmp)))
            print_size(out[-1], queries)
        print_backends(sizes[0], measure_backends(sizes[0], searches, Path(tmp)))
    return out


if __name__ == "__main__":
    run()
