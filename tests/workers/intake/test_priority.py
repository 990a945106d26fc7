"""assign_priority: its points, its bands, and how intake applies it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from workers.intake.planfile import PlanFileError, parse_plan
from workers.intake.priority import critical_path, feeds_decision, level, score_plan
from workflows.contracts.plan import Plan

NOW = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)
LIMIT = 1_500_000


def task(tid: str, *deps: str, **extra: Any) -> dict[str, Any]:
    return {"task_id": tid, "action": "analyse", "acceptance_criteria": ["works"],
            "dependencies": list(deps), **extra}


def plan(*tasks: dict[str, Any], **top: Any) -> Plan:
    return Plan.model_validate({"decisions": [{"priority": "LOW", **t} for t in tasks],
                                **top})


@pytest.mark.parametrize(("score", "expected"), [
    (0, "LOW"), (24, "LOW"), (25, "MEDIUM"), (49, "MEDIUM"), (50, "HIGH"), (100, "HIGH")])
def test_bands_are_high_from_50_and_medium_from_25(score: int, expected: str) -> None:
    assert level(score) == expected


def test_each_criterion_gives_the_seeds_points() -> None:
    hyp = {"hypotheses": [{"id": "H1", "statement": "x helps", "test": {
        "metric": "gain", "op": ">", "threshold": 0}}]}
    scores = score_plan(plan(
        task("lone"),
        task("soon", deadline=(NOW + timedelta(days=2, hours=23)).isoformat()),
        task("later", deadline=(NOW + timedelta(days=3)).isoformat()),
        task("test", hypothesis="H1"),
        task("ext", reuse=["c1.data"]),
        task("again", context={"retry_of": "c1.again"}),
        **hyp), now=NOW)
    assert {t: s.score for t, s in scores.items()} == {
        "lone": 0, "soon": 25, "later": 0, "test": 20, "ext": 15, "again": 10}
    assert scores["soon"].level == "MEDIUM" and scores["ext"].level == "LOW"
    assert scores["soon"].reasons == ["+25 deadline in 2 day(s) (≤ 2)"]


def test_an_overdue_deadline_counts_as_urgent() -> None:
    scores = score_plan(plan(task("late", deadline="2026-01-01T00:00:00")), now=NOW)
    assert scores["late"].score == 25


def test_critical_path_is_the_longest_chain_by_task_count() -> None:
    graph = plan(task("a"), task("b", "a"), task("c", "b"), task("side"), task("d", "side"))
    assert critical_path(graph) == {"a", "b", "c"}
    assert critical_path(plan(task("a"), task("b"))) == set()
    scores = score_plan(graph, now=NOW)
    assert scores["b"].score == 30 and scores["d"].score == 0


def test_going_up_a_band_at_50_and_at_25() -> None:
    hyp = {"hypotheses": [{"id": "H1", "statement": "x helps", "test": {
        "metric": "gain", "op": ">", "threshold": 0}}]}
    graph = plan(task("data", reuse=["c1.raw"]), task("fit", "data", hypothesis="H1"),
                 task("extra", reuse=["c1.raw"], context={"carried_from": 1}), **hyp)
    assert feeds_decision(graph) == {"data", "fit"}
    scores = score_plan(graph, now=NOW)
    assert (scores["data"].score, scores["data"].level) == (65, "HIGH")
    assert (scores["fit"].score, scores["fit"].level) == (50, "HIGH")
    assert (scores["extra"].score, scores["extra"].level) == (25, "MEDIUM")


def write(folder: Path, *tasks: dict[str, Any]) -> Path:
    path = folder / "plan.json"
    path.write_text(json.dumps({"decisions": list(tasks)}))
    return path


def test_intake_scores_a_task_without_priority_and_keeps_an_explicit_one(
        tmp_path: Path) -> None:
    path = write(tmp_path, task("a"), task("b", "a", priority="LOW"),
                 task("c", "b", deadline=(NOW + timedelta(days=1)).isoformat()))
    resolved = parse_plan(path, max_bytes=LIMIT, now=NOW).by_id()
    assert (resolved["a"].priority, resolved["b"].priority) == ("MEDIUM", "LOW")
    assert resolved["b"].priority_score is None
    score = resolved["c"].priority_score
    assert score is not None and (score.score, score.level) == (55, "HIGH")
    assert resolved["c"].priority == "HIGH"
    assert score.reasons[0].startswith("+30 on the critical path")


def test_a_plan_file_cannot_set_the_score_itself(tmp_path: Path) -> None:
    path = write(tmp_path, task("a", priority="LOW", priority_score={
        "score": 90, "level": "HIGH"}))
    with pytest.raises(PlanFileError, match="priority_score: set by Assay"):
        parse_plan(path, max_bytes=LIMIT)


def test_intake_adds_the_seeds_gpu_hours_to_an_estimate_with_its_factors(
        tmp_path: Path) -> None:
    path = write(tmp_path, task("a", priority="LOW", estimated_resources={
        "model_params": 150e6, "num_samples": 500, "batch_size": 32}))
    resolved = parse_plan(path, max_bytes=LIMIT).by_id()["a"]
    assert resolved.estimated_resources is not None
    assert resolved.estimated_resources["gpu_hours"] == 0.09
