"""Retrieval quality on the labelled collection: names and descriptions find the obvious."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.retrieval import collection, labelled, names, quality
from skills.index import SkillIndex, reformulate
from workflows.contracts.policy import SkillPolicy


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SkillIndex]:
    with SkillIndex(tmp_path_factory.mktemp("collection")) as opened:
        opened.upsert(collection())
        yield opened


def top(index: SkillIndex, query: str, k: int = 5) -> list[str]:
    policy = SkillPolicy()
    return names(index.search(reformulate(query, policy.queries), top_k=k,
                              threshold=policy.threshold, statuses=None))


def test_the_labelled_set_is_big_enough_and_names_real_folders() -> None:
    folders = {s.pattern.name for s in collection()}
    queries = labelled()
    assert len(folders) >= 40 and len(queries) >= 40
    assert all(set(relevant) <= folders for _, relevant in queries)


def test_a_file_format_in_capitals_finds_the_skill_that_reads_it(index: SkillIndex) -> None:
    assert top(index, "read a FITS image")[0] == "astropy"


def test_a_mixed_effects_model_finds_statsmodels_first(index: SkillIndex) -> None:
    assert top(index, "fit a mixed-effects model")[0] == "statsmodels"


def test_hits_come_best_score_first(index: SkillIndex) -> None:
    hits = index.search(reformulate("cluster single cells and find marker genes", 4),
                        threshold=0.0, statuses=None)
    assert [h.fused for h in hits] == sorted((h.fused for h in hits), reverse=True)


def test_the_fused_search_beats_each_ranking_alone(tmp_path: Path) -> None:
    figures = quality(tmp_path)
    fused = figures["shipped, θ 0"]
    for alone in ("BM25 alone (field-weighted), θ 0", "dense alone, θ 0"):
        assert fused.recall_at_5 > figures[alone].recall_at_5, alone
        assert fused.mrr > figures[alone].mrr, alone
    assert fused.recall_at_5 > figures["before, θ 0"].recall_at_5
    theta = f"{SkillPolicy().threshold:g}"
    assert figures[f"shipped, θ {theta}"].recall_at_5 > figures[f"before, θ {theta}"].recall_at_5
