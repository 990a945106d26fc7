"""Library upkeep: utility scores, pruning, judged merges whose statistics add up, trials."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pytest

from skills.maintain import (
    apply_prune,
    choose_version,
    judge,
    judge_trial,
    merge,
    plan_maintenance,
    scores,
)
from workflows.contracts.plan import JobSpec
from workflows.library.patterns import (
    PatternKind,
    Preconditions,
    Skill,
    SkillMetrics,
    SkillParameter,
    SkillPattern,
    SkillStatus,
)


def skill(name: str, r: int = 0, u: int = 0, s: int = 0, *, status: SkillStatus = "active",
          kind: PatternKind = "skill", version: int = 1, params: Sequence[str] = ("rows",),
          artifacts: Sequence[str] = ("report.html",), metrics: Sequence[str] = ("rows",),
          inputs: Sequence[str] = ("csv",), runs: Sequence[str] = (),
          tags: Sequence[str] = ()) -> Skill:
    job = JobSpec(code="print(1)", source="print(1)", filename="job.py",
                  args={p: 1 for p in params}, expected_artifacts=list(artifacts),
                  expected_metrics=list(metrics))
    pattern = SkillPattern(
        name=name, kind=kind, version=version, description=f"the {name} pattern",
        parameters=[SkillParameter(name=p, type="integer", default=1) for p in params],
        preconditions=Preconditions(input_types=list(inputs)), job=job,
        source_runs=list(runs), tags=list(tags))
    return Skill(pattern=pattern, status=status, origin="extracted",
                 metrics=SkillMetrics(retrieved=r, used=u, succeeded=s,
                                      total_duration_s=10.0 * u, total_cost_usd=0.25 * u))


def by_hand(r: int, u: int, s: int) -> float:
    """Maintenance's utility, written out: s/(u+ε) · log(1+u) · (1 + u/(r+ε))."""
    return s / (u + 0.01) * math.log(1 + u) * (1 + u / (r + 0.01))


STATS = {  # name: (r, u, s); five never succeed (utility 0), the rest do
    "p00": (0, 0, 0), "p01": (50, 0, 0), "p02": (20, 2, 0), "p03": (30, 10, 9),
    "p04": (12, 6, 5), "p05": (40, 3, 0), "p06": (8, 8, 8), "p07": (15, 5, 1),
    "p08": (100, 20, 18), "p09": (10, 5, 4), "p10": (9, 3, 2), "p11": (60, 30, 25),
    "p12": (5, 1, 1), "p13": (25, 12, 3), "p14": (18, 9, 9), "p15": (7, 2, 2),
    "p16": (45, 15, 14), "p17": (3, 3, 0), "p18": (22, 11, 10), "p19": (14, 7, 6),
}


def seeded() -> list[Skill]:
    library = [skill(n, *stats) for n, stats in STATS.items()]
    library += [skill("waiting", 0, 0, 0, status="candidate"),
                skill("gone", 0, 0, 0, status="retired")]
    return library


def table(pairs: dict[tuple[str, str], float]) -> Callable[[str, str], float]:
    """A similarity function from a table of unordered pairs (0 for the rest)."""
    known = {frozenset(k): v for k, v in pairs.items()}
    return lambda a, b: known.get(frozenset((a, b)), 0.0)


NONE = table({})


# --- scores and pruning --------------------------------------------------------------------


def test_scores_are_the_seed_utility() -> None:
    got = scores(seeded())
    assert got["p09@v1"] == pytest.approx(4 / 5.01 * math.log(6) * (1 + 5 / 10.01))
    assert got["p06@v1"] == pytest.approx(by_hand(8, 8, 8))
    assert got["p11@v1"] == pytest.approx(by_hand(60, 30, 25))
    assert got["p00@v1"] == 0 and got["p02@v1"] == 0


def test_the_bottom_fifth_is_pruned_exactly_ties_by_id() -> None:
    plan = plan_maintenance(seeded(), NONE)
    # five patterns score 0; p00 was never retrieved and is not judged; three (20 % of the 19
    # judged) go, the lowest ids first
    assert plan.prune == ["p01@v1", "p02@v1", "p05@v1"]
    assert set(plan.scores) == {f"{n}@v1" for n in STATS}  # candidates and retired don't compete
    kept = [v for k, v in plan.scores.items() if k not in plan.prune]
    assert min(kept) >= max(plan.scores[k] for k in plan.prune)


def test_the_next_lowest_utility_is_pruned_once_zeros_run_out() -> None:
    library = [s for s in seeded() if s.pattern.name not in {"p00", "p01"}]
    plan = plan_maintenance(library, NONE, prune_fraction=0.25)  # 18 live -> 4
    lowest = min((by_hand(*v), n) for n, v in STATS.items() if by_hand(*v) > 0)
    assert lowest[1] == "p07"
    assert plan.prune == ["p02@v1", "p05@v1", "p17@v1", "p07@v1"]


def test_patterns_not_yet_retrieved_enough_are_not_judged() -> None:
    # the first maintenance of a fresh library: built-ins never retrieved, extracted ones used
    builtins = [skill(n, 0, 0, 0).model_copy(update={"origin": "builtin"})
                for n in ("compare-two-groups", "profile-table", "find-outliers")]
    used = [skill("seldom", 2, 0, 0), *[skill(f"q{i}", 10, 5, 4 + i % 2) for i in range(4)],
            skill("weak", 10, 4, 1)]
    plan = plan_maintenance([*builtins, *used], NONE)
    assert plan.prune == ["weak@v1"]  # floor(0.2 * 5 judged); built-ins and "seldom" wait
    assert plan_maintenance([*builtins, *used], NONE, grace=0).prune[:1] == [
        "compare-two-groups@v1"]  # without the grace an unexposed built-in goes first


def test_an_only_active_version_is_pruned_like_any_other() -> None:
    library = [skill("lonely", 10, 1, 0), *[skill(f"q{i}", 10, 5, 5) for i in range(4)]]
    assert plan_maintenance(library, NONE).prune == ["lonely@v1"]


def test_fractions_outside_the_unit_range_and_duplicate_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="prune_fraction"):
        plan_maintenance(seeded(), NONE, prune_fraction=1.5)
    with pytest.raises(ValueError, match="merge_similarity"):
        plan_maintenance(seeded(), NONE, merge_similarity=-0.1)
    with pytest.raises(ValueError, match="p03@v1"):
        plan_maintenance([*seeded(), skill("p03")], NONE)


def test_apply_prune_retires_with_score_and_pass() -> None:
    pruned = apply_prune(skill("p07", 15, 5, 1), finished=40)
    assert pruned.status == "retired"
    assert pruned.note == (f"pruned by maintenance at 40 finished tasks: utility "
                           f"{by_hand(15, 5, 1):.4f}, among the lowest of the library")
    assert pruned.metrics.used == 5  # statistics kept for the audit trail


# --- merges --------------------------------------------------------------------------------


def test_near_duplicates_merge_into_the_higher_utility_one() -> None:
    library = seeded()
    plan = plan_maintenance(library, table({("p03@v1", "p09@v1"): 0.9}))
    assert plan.merges == [("p03@v1", "p09@v1")]
    assert plan.scores["p03@v1"] > plan.scores["p09@v1"]
    assert plan.refused == []


def test_a_utility_tie_keeps_the_lower_id() -> None:
    library = [skill("b", 10, 5, 5), skill("a", 10, 5, 5)]
    plan = plan_maintenance(library, table({("a@v1", "b@v1"): 0.99}), prune_fraction=0)
    assert plan.merges == [("a@v1", "b@v1")]


def test_merging_goes_on_with_each_survivor_most_similar_first() -> None:
    sims = table({("p03@v1", "p09@v1"): 0.90, ("p03@v1", "p04@v1"): 0.95,
                  ("p04@v1", "p09@v1"): 0.88, ("p06@v1", "p14@v1"): 0.86,
                  ("p09@v1", "p19@v1"): 0.87})
    plan = plan_maintenance(seeded(), sims)
    # p03 absorbs p04, then p09 (the survivor is still a candidate); p09 is gone before its
    # pair with p19 comes up, and p04's pair with p09 leaves with both
    assert plan.merges == [("p03@v1", "p04@v1"), ("p03@v1", "p09@v1"),
                           ("p06@v1", "p14@v1")]


def test_three_near_duplicates_end_as_one() -> None:
    library = [skill("a", 10, 5, 5), skill("b", 10, 5, 4), skill("c", 10, 5, 3),
               skill("other", 10, 5, 5, params=("mode",))]
    sims = table({("a@v1", "b@v1"): 0.91, ("b@v1", "c@v1"): 0.90, ("a@v1", "c@v1"): 0.85,
                  ("c@v1", "other@v1"): 0.84})
    plan = plan_maintenance(library, sims, prune_fraction=0)
    assert plan.merges == [("a@v1", "b@v1"), ("a@v1", "c@v1")]   # 0.85: theta_merge itself
    after = apply(library, plan.merges, [])
    live = sorted(s.skill_id for s in after if s.status != "retired")
    assert live == ["a@v1", "other@v1"]
    assert totals(after) == pytest.approx(totals(library))
    (kept,) = [s for s in after if s.skill_id == "a@v1"]
    assert (kept.metrics.used, kept.metrics.succeeded) == (15, 12)


def test_a_later_survivor_absorbs_an_earlier_one_with_its_statistics() -> None:
    library = [skill("a", 10, 2, 1), skill("b", 10, 2, 1), skill("c", 40, 20, 19)]
    sims = table({("a@v1", "b@v1"): 0.95, ("a@v1", "c@v1"): 0.90})
    plan = plan_maintenance(library, sims, prune_fraction=0)
    assert plan.merges == [("a@v1", "b@v1"), ("c@v1", "a@v1")]
    after = apply(library, plan.merges, [])
    assert [s.skill_id for s in after if s.status != "retired"] == ["c@v1"]
    assert totals(after) == pytest.approx(totals(library))


def test_below_theta_merge_nothing_chains() -> None:
    library = [skill("a", 10, 5, 5), skill("b", 10, 5, 4), skill("c", 10, 5, 3)]
    sims = table({("a@v1", "b@v1"): 0.9, ("a@v1", "c@v1"): 0.8499, ("b@v1", "c@v1"): 0.9})
    plan = plan_maintenance(library, sims, prune_fraction=0)
    # a absorbs b; c is close only to the absorbed b, and to a below 0.85
    assert plan.merges == [("a@v1", "b@v1")]


def test_the_judge_refuses_a_structurally_different_pair() -> None:
    library = [skill("a", 10, 5, 5), skill("b", 10, 5, 4, params=("rows", "mode")),
               skill("c", 10, 5, 3, artifacts=("plot.png",)),
               skill("d", 10, 5, 2, inputs=("parquet",))]
    sims = table({("a@v1", "b@v1"): 0.99, ("a@v1", "c@v1"): 0.98, ("a@v1", "d@v1"): 0.97})
    plan = plan_maintenance(library, sims, prune_fraction=0)
    assert plan.merges == []
    assert plan.refused == [
        ("a@v1", "b@v1", "parameters differ: a@v1 has rows (integer); b@v1 has mode "
                         "(integer), rows (integer)"),
        ("a@v1", "c@v1", "expected artifacts differ: a@v1 has report.html; c@v1 has plot.png"),
        ("a@v1", "d@v1", "input types differ: a@v1 has csv; d@v1 has parquet"),
    ]
    assert judge(library[0], skill("e", metrics=())) == (
        "expected metrics differ: a@v1 has rows; e@v1 has none")
    assert judge(library[0], skill("twin", 1, 1, 1)) is None


def test_a_refused_pair_leaves_both_free_to_merge_elsewhere() -> None:
    library = [skill("a", 10, 5, 5), skill("b", 10, 5, 4, params=("mode",)),
               skill("c", 10, 5, 3)]
    sims = table({("a@v1", "b@v1"): 0.99, ("a@v1", "c@v1"): 0.9})
    plan = plan_maintenance(library, sims, prune_fraction=0)
    assert [r[:2] for r in plan.refused] == [("a@v1", "b@v1")]
    assert plan.merges == [("a@v1", "c@v1")]


def test_kinds_pruned_patterns_and_weak_similarity_are_not_merged() -> None:
    library = [skill("a", 10, 5, 5), skill("b", 10, 5, 5, kind="subagent"),
               skill("c", 10, 0, 0), skill("d", 10, 5, 4), skill("e", 10, 5, 3)]
    sims = table({("a@v1", "b@v1"): 0.99, ("a@v1", "c@v1"): 0.99, ("d@v1", "e@v1"): 0.84,
                  ("a@v1", "e@v1"): math.nan})
    plan = plan_maintenance(library, sims)
    assert plan.prune == ["c@v1"]
    assert plan.merges == [] and plan.refused == []


def test_merge_sums_statistics_and_retires_the_absorbed() -> None:
    keep = skill("a", 10, 5, 4, runs=("r1", "r2"), tags=("csv",))
    drop = skill("b", 20, 6, 3, runs=("r2", "r3"), tags=("sales",))
    kept, gone = merge(keep, drop)
    m = kept.metrics
    assert (m.retrieved, m.used, m.succeeded) == (30, 11, 7)
    assert (m.total_duration_s, m.total_cost_usd) == (110.0, 2.75)
    assert kept.pattern.source_runs == ["r1", "r2", "r3"]
    assert kept.pattern.tags == ["csv", "sales"]
    assert (kept.origin, kept.status, kept.note) == ("extracted", "active", "absorbed b@v1")
    assert (gone.status, gone.note) == ("retired", "merged into a@v1")
    with pytest.raises(ValueError, match="into itself"):
        merge(keep, keep)
    with pytest.raises(ValueError, match="subagent"):
        merge(keep, skill("s", kind="subagent"))


def totals(library: Sequence[Skill]) -> tuple[float, ...]:
    live = [s.metrics for s in library if s.status != "retired"]
    return (sum(m.retrieved for m in live), sum(m.used for m in live),
            sum(m.succeeded for m in live), sum(m.total_duration_s for m in live),
            sum(m.total_cost_usd for m in live))


def apply(library: list[Skill], merges: list[tuple[str, str]], prune: list[str]) -> list[Skill]:
    rows = {s.skill_id: s for s in library}
    for survivor, absorbed in merges:
        rows[survivor], rows[absorbed] = merge(rows[survivor], rows[absorbed])
    for skill_id in prune:
        rows[skill_id] = apply_prune(rows[skill_id])
    return list(rows.values())


def test_library_statistics_add_up_across_a_pass() -> None:
    library = seeded()
    sims = table({("p03@v1", "p09@v1"): 0.9, ("p11@v1", "p16@v1"): 0.92,
                  ("p06@v1", "p14@v1"): 0.86, ("p01@v1", "p12@v1"): 0.99})
    merged_only = plan_maintenance(library, sims, prune_fraction=0)
    assert len(merged_only.merges) == 4
    after = apply(library, merged_only.merges, [])
    assert totals(after) == pytest.approx(totals(library))
    assert sum(s.status == "retired" for s in after) == 1 + 4
    full = plan_maintenance(library, sims)
    assert ("p12@v1", "p01@v1") not in full.merges and len(full.merges) == 3
    after = apply(library, full.merges, full.prune)
    pruned = [s for s in library if s.skill_id in full.prune]
    expected = [a - b for a, b in zip(totals(library), totals(pruned), strict=True)]
    assert totals(after) == pytest.approx(expected)


# --- versions: A/B share and the trial's verdict -------------------------------------------


def test_the_trial_gets_its_share_of_keys_deterministically() -> None:
    active = skill("v", 10, 10, 8, version=1)
    trial = skill("v", 0, 0, 0, version=2, status="trial").model_copy(update={"share": 0.1})
    keys = [f"run-{i}/task-{i % 7}" for i in range(1000)]
    chosen = [choose_version(active, trial, k).skill_id for k in keys]
    assert 70 <= chosen.count("v@v2") <= 130
    assert chosen == [choose_version(active, trial, k).skill_id for k in keys]
    assert {choose_version(active, None, k).skill_id for k in keys} == {"v@v1"}
    everyone = trial.model_copy(update={"share": 1.0})
    assert {choose_version(active, everyone, k).skill_id for k in keys} == {"v@v2"}
    nobody = trial.model_copy(update={"share": 0.0})
    assert {choose_version(active, nobody, k).skill_id for k in keys} == {"v@v1"}


def test_a_trial_continues_until_enough_uses() -> None:
    active = skill("v", 10, 10, 8)
    assert judge_trial(active, skill("v", 4, 4, 4, version=2)) == "continue"
    assert judge_trial(active, skill("v", 4, 4, 4, version=2), min_uses=4) == "promote"


def test_a_trial_as_good_as_the_active_is_promoted_a_worse_one_retired() -> None:
    active = skill("v", 10, 10, 8)
    assert judge_trial(active, skill("v", 5, 5, 4, version=2)) == "promote"  # 0.8 ≥ 0.8
    assert judge_trial(active, skill("v", 6, 5, 3, version=2)) == "retire"  # 0.6 < 0.8


def test_an_unused_active_is_judged_by_its_extraction_evidence() -> None:
    active = skill("v").model_copy(update={"metrics": SkillMetrics(evidence_successes=3,
                                                                   evidence_failures=1)})
    assert judge_trial(active, skill("v", 5, 5, 4, version=2)) == "promote"  # 0.8 ≥ 0.75
    assert judge_trial(active, skill("v", 5, 5, 3, version=2)) == "retire"  # 0.6 < 0.75
    with pytest.raises(ValueError, match="min_uses"):
        judge_trial(active, skill("v", version=2), min_uses=0)
