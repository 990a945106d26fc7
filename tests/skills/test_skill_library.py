"""The skill library's activities on real PostgreSQL and a real Qdrant Edge index.

``SkillLibrary`` is exercised the way the skills pool runs it: its rows in an embedded
PostgreSQL database of the test's own, its index a Qdrant Edge shard in the test's directory,
every activity called directly. Matching supplies plans and jobs, recording counts uses and
decides trials, extraction adds candidates and maintenance prunes and merges.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from skills.builtin import builtin_skills
from skills.extract.cases import action_type
from skills.library import SkillLibrary
from skills.maintain import choose_version
from skills.store import SkillStore
from tests.data.skills.library import anchor_skills
from workflows.contracts.patterns import (
    Deviation,
    Preconditions,
    Skill,
    SkillMetrics,
    SkillParameter,
    SkillPattern,
    SkillSignature,
    SkillStatus,
    slug,
)
from workflows.contracts.plan import Check, JobSpec, Scalar
from workflows.contracts.policy import SkillPolicy
from workflows.contracts.skills import (
    ExtractInput,
    MaintainInput,
    MatchAnswer,
    MatchInput,
    MatchTask,
    SkillUse,
    TaskOutcome,
)
from workflows.library.formulas import FLAG_AFTER_DEVIATIONS, PRUNE_FRACTION, TRIAL_USES, utility

pytestmark = pytest.mark.integration

NOW = datetime.now(UTC)
SOURCE = (
    "import argparse\nimport csv\nimport json\n\n"
    "parser = argparse.ArgumentParser()\n"
    "parser.add_argument('--data', required=True)\n"
    "parser.add_argument('--min_count', type=int, default=5)\n"
    "args = parser.parse_args()\n"
    "with open(args.data, newline='', encoding='utf-8') as handle:\n"
    "    rows = list(csv.DictReader(handle))\n"
    "with open('metrics.json', 'w', encoding='utf-8') as out:\n"
    "    json.dump({'rows': len(rows), 'groups': 1}, out)\n"
    "with open('summary.json', 'w', encoding='utf-8') as out:\n"
    "    json.dump({'rows': len(rows)}, out)\n"
)
GOAL = ("Compute the mean value of each group in the measurements table of the new site and "
        "count its rows")
MEANS = "group-means-table"


# --- building skills and outcomes ----------------------------------------------------------


def job(source: str = SOURCE, *, params: Sequence[str] = ("data", "min_count"),
        artifacts: Sequence[str] = ("summary.json",)) -> JobSpec:
    args: dict[str, Scalar] = {p: ("site_1.csv" if p == "data" else 5) for p in params}
    return JobSpec(code=source, source=source, filename="group_means.py", args=args,
                   expected_artifacts=list(artifacts), expected_metrics=["rows", "groups"])


def parameters(names: Sequence[str] = ("data", "min_count")) -> list[SkillParameter]:
    known = {
        "data": SkillParameter(name="data", type="file_path", target="input", default="site_1.csv",
                               extensions=["csv"]),
        "min_count": SkillParameter(name="min_count", type="integer", default=5, minimum=1,
                                    maximum=100),
        "mode": SkillParameter(name="mode", type="enum", default="fast",
                               options=["fast", "exact"]),
    }
    return [known[n] for n in names]


def means_skill(*, version: int = 1, status: SkillStatus = "active", share: float = 0.0,
                confidence: float = 1.0, metrics: SkillMetrics | None = None,
                source: str = SOURCE) -> Skill:
    """The skill the matching tests look for: group means of a csv table."""
    pattern = SkillPattern(
        name=MEANS, version=version,
        description=("Compute the mean value of each group of a measurements table and count "
                     "its rows."),
        context="Summarise a csv table of measurements: row count and mean value per group.",
        action="Compute the mean value per group of {data} (groups of at least {min_count})",
        acceptance_criteria=["summary.json gives the mean value of every group of {data}"],
        signature=SkillSignature(keywords=["mean", "group", "rows"], input_types=["csv"],
                                 output_types=["json", "rows"]),
        preconditions=Preconditions(input_types=["csv"], keywords=["mean", "group", "groups"]),
        parameters=parameters(), job=job(source), checks=[Check(metric="rows", op=">", value=0)],
        source_runs=["run-0"])
    return Skill(pattern=pattern, status=status, share=share, confidence=confidence,
                 metrics=metrics or SkillMetrics(retrieved=30, used=20, succeeded=19,
                                                 total_duration_s=40.0, last_used=NOW))


def templated(anchor: Skill, *, name: str | None = None, description: str | None = None,
              params: Sequence[str] = ("data", "min_count"),
              stats: tuple[int, int, int, float, float] = (0, 0, 0, 0.0, 0.0)) -> Skill:
    """A hand-written anchor skill given a job template, parameters and statistics."""
    r, u, s, duration, cost = stats
    update: dict[str, object] = {
        "job": job(params=params), "parameters": parameters(params),
        "preconditions": Preconditions(input_types=["csv"])}
    if name is not None:
        update["name"] = name
    if description is not None:
        update["description"] = description
    return anchor.model_copy(update={
        "pattern": anchor.pattern.model_copy(update=update), "origin": "extracted",
        "metrics": SkillMetrics(retrieved=r, used=u, succeeded=s, total_duration_s=duration,
                                total_cost_usd=cost, last_used=NOW if u else None)})


def use_of(skill_id: str, *, trial: bool = False) -> SkillUse:
    name, version = skill_id.split("@v")
    return SkillUse(skill_id=skill_id, name=name, version=int(version), trial=trial,
                    expected_artifacts=["summary.json"], expected_metrics=["rows", "groups"])


def used(skill_id: str, key: str, *, status: str = "completed", attempts: int = 1,
         deviation: Deviation = "none", author: str | None = None,
         duration_s: float = 3.0, cost_usd: float = 0.02, ran: str = SOURCE) -> TaskOutcome:
    """A finished task that ran ``skill_id``'s job (``key`` is ``run/task``)."""
    run_id, task_id = key.split("/")
    return TaskOutcome(
        run_id=run_id, task_id=task_id, action="Compute the mean value per group of site.csv",
        status=status, attempts=attempts, job_author=author or f"skill:{skill_id}",
        job=job(ran),
        skill=use_of(skill_id), deviation=deviation, duration_s=duration_s, cost_usd=cost_usd)


def goal(text: str = GOAL, data: Sequence[str] = ("site_9.csv",), *, run_id: str = "run-1",
         policy: SkillPolicy | None = None) -> MatchInput:
    return MatchInput(run_id=run_id, goal=text, data_names=list(data),
                      policy=policy or SkillPolicy())


def retrieved_ids(answer: MatchAnswer) -> set[str]:
    return {r.skill_id for found in answer.retrieved.values() for r in found}


Totals = tuple[int, int, int, float, float]


def totals(skills: Sequence[Skill]) -> Totals:
    ms = [s.metrics for s in skills]
    return (sum(m.retrieved for m in ms), sum(m.used for m in ms), sum(m.succeeded for m in ms),
            sum(m.total_duration_s for m in ms), sum(m.total_cost_usd for m in ms))


# --- maintenance ---------------------------------------------------------------------------

TWIN = "kmeans-clustering"
TWIN_COPY = "kmeans-clustering-rows"
SHAPE = "haversine-distances"
SHAPE_COPY = "haversine-distances-modes"
STATS: dict[str, tuple[int, int, int, float, float]] = {
    # r, u, s, seconds, dollars; utilities all differ, the three lowest are pruned
    "profile-csv-table": (40, 20, 18, 200.0, 1.0),
    "welch-t-test-two-groups": (30, 4, 1, 40.0, 0.2),       # bottom
    "one-way-anova": (12, 6, 5, 60.0, 0.3),
    "ols-linear-regression": (50, 2, 0, 25.0, 0.1),         # bottom (0)
    "logistic-regression-classifier": (22, 11, 10, 110.0, 0.55),
    "correlation-matrix-heatmap": (9, 3, 2, 30.0, 0.15),
    "resample-time-series": (18, 9, 9, 90.0, 0.45),
    "rolling-average-smoothing": (25, 12, 3, 120.0, 0.6),
    "seasonal-decomposition": (7, 2, 2, 20.0, 0.1),
    "exponential-smoothing-forecast": (60, 3, 1, 30.0, 0.15),  # bottom
    "iqr-outlier-detection": (45, 15, 14, 150.0, 0.75),
    TWIN: (30, 10, 9, 100.0, 0.5),
    TWIN_COPY: (10, 5, 4, 50.0, 0.25),
    SHAPE: (14, 7, 6, 70.0, 0.35),
    SHAPE_COPY: (8, 8, 8, 80.0, 0.4),
}


def maintenance_library() -> list[Skill]:
    """Fifteen active skills: eleven apart, a near-identical pair, a differently shaped pair."""
    anchors = {s.pattern.name: s for s in anchor_skills()}
    skills = [templated(anchors[n], stats=STATS[n]) for n in STATS
              if n not in (TWIN_COPY, SHAPE_COPY)]
    twin = anchors[TWIN]
    skills.append(templated(twin, name=TWIN_COPY, stats=STATS[TWIN_COPY],
                            description=twin.pattern.description.replace("rows", "records")))
    shape = anchors[SHAPE]
    skills.append(templated(shape, name=SHAPE_COPY, params=("data", "mode"),
                            stats=STATS[SHAPE_COPY],
                            description=shape.pattern.description.replace("pairs", "couples")))
    return skills


async def test_maintenance_prunes_the_bottom_fifth_merges_twins_and_statistics_add_up(
        store: SkillStore, library: SkillLibrary) -> None:
    await store.add_many(maintenance_library(), by="test")
    everything = SkillPolicy(threshold=0.0, top_k=100)
    seen = await library.match_skills(goal("Cluster the rows of a table", policy=everything))
    assert len(retrieved_ids(seen)) == 15  # before maintenance every skill can be found
    before = await store.list(["active", "trial"])
    assert len(before) == 15
    scores = {s.skill_id: utility(s.metrics) for s in before}
    assert len(set(scores.values())) == 15
    bottom = sorted(scores, key=scores.__getitem__)[:math.floor(15 * PRUNE_FRACTION)]
    assert {b.split("@")[0] for b in bottom} == {
        "welch-t-test-two-groups", "ols-linear-regression", "exponential-smoothing-forecast"}

    answer = await library.maintain_skills(MaintainInput(finished=10))

    assert answer.scored == 15
    assert sorted(answer.pruned) == sorted(bottom)
    assert scores[f"{TWIN}@v1"] > scores[f"{TWIN_COPY}@v1"]
    assert answer.merged == {f"{TWIN_COPY}@v1": f"{TWIN}@v1"}
    shaped = {f"{SHAPE}@v1", f"{SHAPE_COPY}@v1"}
    assert not shaped & {*answer.merged, *answer.merged.values()}
    offered = [r for r in answer.refused_merges if all(s in r for s in shaped)]
    assert len(offered) == 1 and "parameters differ" in offered[0], answer.refused_merges

    after = {s.skill_id: s for s in await store.list()}
    retired = {i for i, s in after.items() if s.status == "retired"}
    assert retired == {*bottom, f"{TWIN_COPY}@v1"}
    for skill_id in bottom:
        assert after[skill_id].note.startswith("pruned by maintenance at 10 finished tasks")
    assert after[f"{TWIN_COPY}@v1"].note == f"merged into {TWIN}@v1"
    assert after[f"{TWIN}@v1"].note.endswith(f"absorbed {TWIN_COPY}@v1")
    twin_before = [s for s in before if s.skill_id in (f"{TWIN}@v1", f"{TWIN_COPY}@v1")]
    assert totals([after[f"{TWIN}@v1"]]) == pytest.approx(totals(twin_before))
    live_after = [s for s in after.values() if s.status != "retired"]
    kept_before = [s for s in before if s.skill_id not in bottom]
    assert totals(live_after) == pytest.approx(totals(kept_before))

    again = await library.match_skills(goal("Cluster the rows of a table", policy=everything))
    assert retrieved_ids(again) == set(after) - retired


async def test_maintenance_merges_three_near_duplicates_into_one(
        store: SkillStore, library: SkillLibrary) -> None:
    twin = {s.pattern.name: s for s in anchor_skills()}[TWIN]
    copies = [templated(twin, stats=STATS[TWIN]),
              templated(twin, name=TWIN_COPY, stats=STATS[TWIN_COPY],
                        description=twin.pattern.description.replace("rows", "records")),
              templated(twin, name=f"{TWIN}-records", stats=(6, 3, 2, 30.0, 0.15),
                        description=twin.pattern.description.replace("rows", "records")
                        + " ")]
    await store.add_many(copies, by="test")
    before = await store.list(["active", "trial"])

    answer = await library.maintain_skills(MaintainInput(finished=10))

    assert answer.pruned == [] and len(answer.merged) == 2, answer
    after = await store.list(["active", "trial"])
    assert [s.skill_id for s in after] == [f"{TWIN}@v1"]
    assert totals(after) == pytest.approx(totals(before))


# --- matching a goal -----------------------------------------------------------------------


async def test_a_confident_match_supplies_one_application_filled_from_the_goal(
        store: SkillStore, library: SkillLibrary) -> None:
    await store.add_many([means_skill(), *anchor_skills()[:3]], by="test")
    answer = await library.match_skills(
        goal(f"{GOAL} of site_9.csv with min count 7", ["notes.txt", "site_9.csv"]))

    assert len(answer.applications) == 1, answer.reasons
    app = answer.applications[0]
    assert app.task_id == "skill-1"
    assert app.use.skill_id == f"{MEANS}@v1" and not app.use.trial
    assert app.use.confidence >= SkillPolicy().min_confidence
    assert app.job.args == {"data": "site_9.csv", "min_count": 7}
    assert app.job.source == SOURCE
    assert app.use.parameters == {"data": "site_9.csv", "min_count": 7}
    assert app.inputs == ["site_9.csv"]
    assert app.action == "Compute the mean value per group of site_9.csv (groups of at least 7)"
    assert app.acceptance_criteria == ["summary.json gives the mean value of every group of "
                                       "site_9.csv"]
    assert [c.describe() for c in app.checks] == ["rows > 0"]
    assert [r.used for r in answer.retrieved["goal"] if r.skill_id == f"{MEANS}@v1"] == [True]
    assert "goal" not in answer.reasons
    assert (await store.get(f"{MEANS}@v1")).metrics.retrieved == 31


async def test_a_goal_in_other_word_forms_applies_the_builtin_regression(
        store: SkillStore, library: SkillLibrary) -> None:
    await store.add_many(builtin_skills(), by="test")
    answer = await library.match_skills(goal("Does y depend linearly on x", ["data.csv"]))
    assert [a.use.skill_id for a in answer.applications] == ["linear-regression@v1"], (
        answer.reasons)
    assert answer.applications[0].job.args == {"data": "data.csv", "x": "x", "y": "y"}


async def test_the_builtin_comparison_takes_the_columns_the_goal_names_from_the_header(
        store: SkillStore, library: SkillLibrary) -> None:
    await store.add_many(builtin_skills(), by="test")
    ask = goal("Test whether mean revenue differs between two groups by region", ["sales.csv"],
               policy=SkillPolicy(min_confidence=0.5))
    ask.data_heads = {"sales.csv": "region,revenue\nnorth,3\nsouth,4\n"}
    answer = await library.match_skills(ask)
    assert [a.use.skill_id for a in answer.applications] == ["compare-two-groups@v1"], (
        answer.reasons)
    args = answer.applications[0].job.args
    assert (args["group_column"], args["value_column"]) == ("region", "revenue")


async def test_a_goal_for_another_skill_does_not_take_the_regression(
        store: SkillStore, library: SkillLibrary) -> None:
    await store.add_many(builtin_skills(), by="test")
    answer = await library.match_skills(
        goal("Which values of the weight column are outliers", ["data.csv"]))
    assert [a.use.skill_id for a in answer.applications] == ["find-outliers@v1"], (
        answer.reasons)
    fits = {r.skill_id: r.preconditions_hold for r in answer.retrieved["goal"]}
    assert fits.get("linear-regression@v1") is not True


async def test_a_goal_without_the_required_data_type_gets_no_application_and_why(
        store: SkillStore, library: SkillLibrary) -> None:
    await store.add(means_skill(), by="test")
    answer = await library.match_skills(goal(data=["site_9.parquet", "notes.txt"]))
    assert answer.applications == []
    reason = answer.reasons["goal"]
    assert f"best match {MEANS}@v1 does not fit" in reason
    assert "no csv data file was given" in reason
    [found] = answer.retrieved["goal"]
    assert not found.preconditions_hold and not found.used
    assert (await store.get(f"{MEANS}@v1")).metrics.retrieved == 31  # retrieved, not used


async def test_a_number_outside_the_parameter_range_is_refused_with_the_range(
        store: SkillStore, library: SkillLibrary) -> None:
    await store.add(means_skill(), by="test")
    answer = await library.match_skills(goal(f"{GOAL} with min count 500"))
    assert answer.applications == []
    assert "parameter 'min_count' is 500, above its maximum 100" in answer.reasons["goal"]
    below = await library.match_skills(goal(f"{GOAL} with min_count=0", run_id="run-2"))
    assert below.applications == []
    assert "below its minimum 1" in below.reasons["goal"]


async def test_an_empty_library_or_a_blank_goal_gives_a_reason_not_an_error(
        library: SkillLibrary) -> None:
    answer = await library.match_skills(goal())
    assert answer.applications == [] and answer.retrieved == {}
    assert answer.reasons == {"goal": "no skill above similarity 0.35 among 0 indexed"}
    blank = await library.match_skills(goal("   \n\t "))
    assert blank.applications == [] and "goal" in blank.reasons


async def test_apply_turned_off_retrieves_but_does_not_apply(
        store: SkillStore, library: SkillLibrary) -> None:
    await store.add(means_skill(), by="test")
    answer = await library.match_skills(goal(policy=SkillPolicy(apply=False)))
    assert answer.applications == []
    assert answer.reasons["goal"] == "applying skills is turned off by the run's policy"
    [found] = answer.retrieved["goal"]
    assert found.skill_id == f"{MEANS}@v1" and found.preconditions_hold and not found.used
    assert (await store.get(f"{MEANS}@v1")).metrics.retrieved == 31
    assert len((await library.match_skills(goal(run_id="run-2"))).applications) == 1


async def test_a_candidate_skill_is_never_applied(store: SkillStore,
                                                  library: SkillLibrary) -> None:
    await store.add(means_skill(status="candidate"), by="test")
    answer = await library.match_skills(goal())
    assert answer.applications == [] and answer.retrieved == {}
    assert answer.reasons["goal"].startswith("no skill above similarity")
    assert (await store.get(f"{MEANS}@v1")).metrics.retrieved == 30


# --- matching a plan -----------------------------------------------------------------------


async def test_only_the_jobless_tasks_of_a_plan_are_matched(store: SkillStore,
                                                            library: SkillLibrary) -> None:
    await store.add(means_skill(), by="test")
    action = "Compute the mean value of each group of the measurements table site_9.csv"
    tasks = [MatchTask(task_id="t1", action=action, has_job=True, input_names=["site_9.csv"]),
             MatchTask(task_id="t2", action=action, has_job=False, input_names=["site_9.csv"]),
             MatchTask(task_id="t3", action=action, has_job=True, input_names=["site_9.csv"])]
    answer = await library.match_skills(MatchInput(run_id="run-1", tasks=tasks))
    assert [a.task_id for a in answer.applications] == ["t2"]
    assert answer.applications[0].job.args == {"data": "site_9.csv", "min_count": 5}
    assert set(answer.retrieved) == {"t2"}
    assert not {"t1", "t3", "goal"} & set(answer.reasons)
    assert (await store.get(f"{MEANS}@v1")).metrics.retrieved == 31  # once, for t2


async def test_a_skill_whose_job_writes_not_every_checked_metric_is_not_applied(
        store: SkillStore, library: SkillLibrary) -> None:
    await store.add(means_skill(), by="test")
    action = "Compute the mean value of each group of the measurements table site_9.csv"
    tasks = [MatchTask(task_id="t1", action=action, has_job=False, input_names=["site_9.csv"],
                       checked_metrics=["rows", "r2"]),
             MatchTask(task_id="t2", action=action, has_job=False, input_names=["site_9.csv"],
                       checked_metrics=["rows", "groups"])]
    answer = await library.match_skills(MatchInput(run_id="run-1", tasks=tasks))
    assert [a.task_id for a in answer.applications] == ["t2"]  # it writes rows and groups
    [found] = answer.retrieved["t1"]
    assert not found.preconditions_hold and not found.used
    assert "its job writes no r2 metric, which the task's checks read" in found.problems
    assert answer.reasons["t1"] == (f"best match {MEANS}@v1 does not fit: its job writes no "
                                    "r2 metric, which the task's checks read")


# --- trial versions ------------------------------------------------------------------------

TRIAL_SOURCE = SOURCE.replace("default=5", "default=3")


async def add_versions(store: SkillStore, active: tuple[int, int]) -> tuple[Skill, Skill]:
    """An active v1 with ``active`` (uses, successes) and a fresh trial v2 at share 0.5."""
    uses, wins = active
    v1 = means_skill(metrics=SkillMetrics(retrieved=uses, used=uses, succeeded=wins,
                                          total_duration_s=2.0 * uses, last_used=NOW))
    v2 = means_skill(version=2, source=TRIAL_SOURCE, metrics=SkillMetrics())
    await store.add_many([v1, v2.model_copy(update={"status": "candidate"})], by="test")
    trial = await store.set_status(v2.skill_id, "trial", by="test", share=0.5)
    return await store.get(v1.skill_id), trial


async def test_a_trial_version_gets_its_share_of_runs_deterministically(
        store: SkillStore, library: SkillLibrary) -> None:
    active, trial = await add_versions(store, (10, 10))
    runs = [f"run-{i:03d}" for i in range(40)]
    chosen: dict[str, str] = {}
    for run in runs:
        answer = await library.match_skills(goal(run_id=run))
        assert len(answer.applications) == 1, answer.reasons
        use = answer.applications[0].use
        assert use.trial == (use.skill_id == trial.skill_id)
        chosen[run] = use.skill_id
    counts = {v: list(chosen.values()).count(v) for v in (active.skill_id, trial.skill_id)}
    assert min(counts.values()) >= 8, counts  # a 0.5 share: both versions get runs
    assert chosen == {r: choose_version(active, trial, f"{r}/goal").skill_id for r in runs}
    for run in runs[:8]:  # the same run always gets the same version
        again = await library.match_skills(goal(run_id=run))
        assert again.applications[0].use.skill_id == chosen[run]


async def test_a_trial_that_does_better_is_promoted_and_the_old_version_retired(
        store: SkillStore, library: SkillLibrary) -> None:
    active, trial = await add_versions(store, (10, 6))
    outcomes = [used(trial.skill_id, f"run-{i}/t1") for i in range(TRIAL_USES)]
    answer = await library.record_outcomes(outcomes)
    assert answer.used == [trial.skill_id] * TRIAL_USES
    assert answer.promoted == [trial.skill_id] and answer.retired == []
    assert (await store.get(trial.skill_id)).status == "active"
    old = await store.get(active.skill_id)
    assert (old.status, old.note) == ("retired", f"replaced by {trial.skill_id}")
    match = await library.match_skills(goal(run_id="run-after"))
    assert match.applications[0].use.skill_id == trial.skill_id
    assert not match.applications[0].use.trial


async def test_a_trial_that_does_worse_is_retired_and_the_active_kept(
        store: SkillStore, library: SkillLibrary) -> None:
    active, trial = await add_versions(store, (10, 10))
    statuses = ["completed", "failed", "completed", "failed", "failed"]
    outcomes = [used(trial.skill_id, f"run-{i}/t1", status=s,
                     deviation="none" if s == "completed" else "major")
                for i, s in enumerate(statuses)]
    answer = await library.record_outcomes(outcomes)
    assert answer.retired == [trial.skill_id] and answer.promoted == []
    gone = await store.get(trial.skill_id)
    assert gone.status == "retired" and gone.note == f"its trial did worse than {active.skill_id}"
    assert (await store.get(active.skill_id)).status == "active"
    for run in ("run-a", "run-b", "run-c", "run-d", "run-e", "run-f"):
        match = await library.match_skills(goal(run_id=run))
        assert match.applications[0].use.skill_id == active.skill_id


# --- recording outcomes --------------------------------------------------------------------


async def test_a_skill_whose_job_never_ran_is_retrieved_not_used(
        store: SkillStore, library: SkillLibrary) -> None:
    skill = await store.add(means_skill(), by="test")
    never_ran = used(skill.skill_id, "run-1/t1", status="cancelled", attempts=0)
    replaced = used(skill.skill_id, "run-2/t1", author="plan")
    answer = await library.record_outcomes([never_ran, replaced])
    assert answer.recorded == 2 and answer.used == []
    assert (await store.get(skill.skill_id)).metrics == skill.metrics
    debugged = used(skill.skill_id, "run-3/t1", attempts=2, author="debugger:timeout")
    assert (await library.record_outcomes([debugged])).used == [skill.skill_id]
    assert (await store.get(skill.skill_id)).metrics.used == skill.metrics.used + 1


async def test_a_debugger_that_rewrote_the_analysis_did_not_use_the_skill(
        store: SkillStore, library: SkillLibrary) -> None:
    skill = await store.add(means_skill(), by="test")
    rewritten = "import pandas as pd\nprint(pd.read_csv('site_1.csv').describe())\n"
    outcome = used(skill.skill_id, "run-1/t1", attempts=2, author="debugger:crash",
                   ran=rewritten)
    answer = await library.record_outcomes([outcome])
    assert answer.used == [] and answer.unused == [skill.skill_id]
    assert answer.utilisation == {"run-1/t1": 0.0}
    assert (await store.get(skill.skill_id)).metrics == skill.metrics
    (note,) = [e.detail for e in await store.events(skill.skill_id) if e.action == "unused"]
    assert note == {"key": "run-1/t1", "alpha": 0.0, "succeeded": True}
    kept = used(skill.skill_id, "run-2/t1", attempts=2, author="debugger:crash",
                ran=SOURCE.replace("default=5", "default=2"))
    assert (await library.record_outcomes([kept])).utilisation == {"run-2/t1": 1.0}
    (use,) = [e.detail for e in await store.events(skill.skill_id) if e.action == "used"]
    assert use["alpha"] == 1.0


async def test_a_repeated_outcome_counts_once(store: SkillStore, library: SkillLibrary) -> None:
    skill = await store.add(means_skill(), by="test")
    outcome = used(skill.skill_id, "run-1/t1", duration_s=4.0, cost_usd=0.5)
    await library.record_outcomes([outcome, outcome])
    await library.record_outcomes([outcome])  # a retried activity or a repeated signal
    m = (await store.get(skill.skill_id)).metrics
    before = skill.metrics
    assert (m.used, m.succeeded) == (before.used + 1, before.succeeded + 1)
    assert m.total_duration_s == pytest.approx(before.total_duration_s + 4.0)
    assert m.total_cost_usd == pytest.approx(before.total_cost_usd + 0.5)
    assert [e.action for e in await store.events(skill.skill_id)].count("used") == 1


async def test_the_answer_reports_a_repeated_outcome_once(
        store: SkillStore, library: SkillLibrary) -> None:
    skill = await store.add(means_skill(), by="test")
    outcome = used(skill.skill_id, "run-1/t1")
    answer = await library.record_outcomes([outcome, outcome])
    assert answer.used == [skill.skill_id]


async def test_repeated_major_deviations_send_an_active_skill_back_to_review(
        store: SkillStore, library: SkillLibrary) -> None:
    skill = await store.add(means_skill(), by="test")
    assert len((await library.match_skills(goal())).applications) == 1
    failures = [used(skill.skill_id, f"run-{i}/t1", status="failed", deviation="major")
                for i in range(FLAG_AFTER_DEVIATIONS)]
    first = await library.record_outcomes(failures[:-1])
    assert first.flagged == []
    answer = await library.record_outcomes(failures[-1:])
    assert answer.flagged == [skill.skill_id]
    flagged = await store.get(skill.skill_id)
    assert flagged.status == "candidate"
    assert flagged.note == f"flagged for review after {FLAG_AFTER_DEVIATIONS} major deviations"
    after = await library.match_skills(goal(run_id="run-later"))
    assert after.applications == []
    assert f"{MEANS}@v1" not in retrieved_ids(after)


async def test_a_hostile_outcome_leaves_no_half_recorded_batch(
        store: SkillStore, library: SkillLibrary) -> None:
    skill = await store.add(means_skill(), by="test")
    batch = [used(skill.skill_id, "run-1/t1"), used(skill.skill_id, "run-2/t1", duration_s=-1),
             used(skill.skill_id, "run-3/t1")]
    try:
        await library.record_outcomes(batch)
    except ValueError as err:  # refused as a whole: then nothing may have been recorded
        assert "duration_s must be a finite number of at least 0" in str(err)
        expected = skill.metrics.used
    else:  # the hostile outcome skipped: then both good ones count
        expected = skill.metrics.used + 2
    assert (await store.get(skill.skill_id)).metrics.used == expected


# --- extraction ----------------------------------------------------------------------------

SITE_ACTION = "Describe the measurements table of site {n}: row count and mean value per group."


def site_outcome(n: int) -> TaskOutcome:
    data = f"site_{n}.csv"
    source = SOURCE.replace("min_count", "column").replace("type=int, default=5", "default='v'")
    return TaskOutcome(
        run_id=f"run-{n:02d}", task_id="t1", action=SITE_ACTION.format(n=n), status="completed",
        goal="Describe every site's measurements", attempts=1, input_names=[data],
        job=JobSpec(code=source, source=source, filename="describe_groups.py",
                    args={"data": data, "column": "value"}, expected_artifacts=["summary.json"],
                    expected_metrics=["rows", "groups"]),
        checks=[Check(metric="rows", op=">", value=0)], duration_s=2.0)


SITE_SKILL = f"{slug(action_type(site_outcome(1)))}@v1"


async def test_ten_similar_outcomes_make_one_candidate_and_a_retry_adds_no_duplicate(
        store: SkillStore, library: SkillLibrary) -> None:
    batch = ExtractInput(outcomes=[site_outcome(n) for n in range(1, 11)])
    answer = await library.extract_skills(batch)
    assert answer.created == [SITE_SKILL] and answer.activated == []
    [skill] = await store.list()
    assert (skill.skill_id, skill.status) == (SITE_SKILL, "candidate")
    data = skill.pattern.parameter("data")
    assert data is not None and (data.type, data.extensions) == ("file_path", ["csv"])
    assert skill.pattern.preconditions.input_types == ["csv"]

    retry = await library.extract_skills(batch)
    assert retry.created == [] and retry.versions == []
    assert [s.skill_id for s in await store.list()] == [SITE_SKILL]
    assert (await library.match_skills(goal(SITE_ACTION.format(n=42), ["site_42.csv"]))
            ).applications == []  # still a candidate


async def test_a_retried_extraction_leaves_the_evidence_unchanged(
        store: SkillStore, library: SkillLibrary) -> None:
    batch = ExtractInput(outcomes=[site_outcome(n) for n in range(1, 11)])
    await library.extract_skills(batch)
    first = await store.get(SITE_SKILL)
    await library.extract_skills(batch)
    again = (await store.get(SITE_SKILL)).metrics
    assert (again.evidence_successes, again.evidence_failures) == (10, 0)
    assert again == first.metrics


async def test_ten_clean_successes_are_approved_automatically_and_then_applied(
        store: SkillStore, library: SkillLibrary) -> None:
    batch = ExtractInput(outcomes=[site_outcome(n) for n in range(1, 11)], auto_approve=0.9)
    answer = await library.extract_skills(batch)
    assert answer.created == [SITE_SKILL] and answer.activated == [SITE_SKILL]
    skill = await store.get(SITE_SKILL)
    assert (skill.status, skill.confidence) == ("active", 1.0)
    assert skill.note == "approved automatically: confidence 1.00 ≥ 0.90"
    match = await library.match_skills(goal(SITE_ACTION.format(n=42), ["site_42.csv"]))
    assert [a.use.skill_id for a in match.applications] == [SITE_SKILL], match.reasons
    assert match.applications[0].job.args["data"] == "site_42.csv"


# --- another process ------------------------------------------------------------------------


async def test_a_skill_approved_by_another_process_is_matched_next(
        store: SkillStore, library: SkillLibrary, fresh_database_url: str) -> None:
    await store.add(means_skill(status="candidate"), by="extraction")
    assert (await library.match_skills(goal())).applications == []
    async with SkillStore(fresh_database_url) as elsewhere:
        await elsewhere.set_status(f"{MEANS}@v1", "active", by="ada")
    answer = await library.match_skills(goal(run_id="run-2"))
    assert [a.use.skill_id for a in answer.applications] == [f"{MEANS}@v1"]
    async with SkillStore(fresh_database_url) as elsewhere:
        await elsewhere.set_status(f"{MEANS}@v1", "retired", by="ada", note="obsolete")
    gone = await library.match_skills(goal(run_id="run-3"))
    assert gone.applications == [] and retrieved_ids(gone) == set()
