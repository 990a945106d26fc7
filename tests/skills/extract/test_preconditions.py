"""Preconditions, postconditions and signature: what the successes shared."""

from __future__ import annotations

from skills.extract import extract
from skills.extract.cases import action_type
from tests.skills.extract.batches import ACTION, CLEAN, NAME, NOW, only, outcome, sales_batch
from workflows.contracts.patterns import SkillStep
from workflows.contracts.plan import Check


def test_postconditions_are_the_checks_every_success_had() -> None:
    skill = only(extract(sales_batch(), [], now=NOW))
    assert skill.pattern.checks == [Check(metric="rows", op=">", value=0)]
    assert skill.pattern.acceptance_criteria == ["rows > 0", "report written"]
    assert skill.pattern.action == ACTION


def test_preconditions_name_the_imports_outside_the_standard_library() -> None:
    skill = only(extract(sales_batch(), [], now=NOW))
    pre = skill.pattern.preconditions
    assert pre.imports == ["numpy", "pandas", "sklearn"]
    assert pre.input_types == ["csv", "txt"]
    assert pre.keywords == ["column", "profile", "report", "sales", "statistics", "table"]
    assert skill.pattern.signature.keywords == pre.keywords
    assert skill.pattern.signature.input_types == ["csv", "txt"]


def test_keywords_are_words_most_actions_share() -> None:
    base = "Profile the sales table, report column statistics by region for the wide"
    tails = ["north", "north", "north", "south"]
    batch = [outcome(i, action=f"{base} {tail} area") for i, tail in enumerate(tails)]
    assert len({action_type(o) for o in batch}) == 1  # one job: one kind, however phrased
    keywords = only(extract(batch, [], now=NOW)).pattern.preconditions.keywords
    assert keywords == ["area", "column", "profile", "region", "report", "sales",
                        "statistics", "table", "wide", "north"]  # most actions first
    assert "south" not in keywords and "the" not in keywords and "by" not in keywords


def test_steps_are_the_most_common_sequence_among_successes() -> None:
    other = [SkillStep(agent="implementer", phase="implement", detail="wrote a new job"),
             *CLEAN]
    batch = [outcome(i, steps=other if i == 0 else CLEAN) for i in range(4)]
    assert only(extract(batch, [], now=NOW)).pattern.steps == CLEAN


def test_the_same_work_on_other_data_files_is_one_task_type() -> None:
    batch = [outcome(i, action=f"Profile sales_q{i}.csv") for i in range(3)]
    batch += [outcome(i, action=f"Profile data/raw_{i}.parquet") for i in range(3, 6)]
    assert len({action_type(o) for o in batch}) == 1  # the file names do not split the kind
    skill = only(extract(batch, [], now=NOW))
    assert skill.pattern.name == NAME
    assert skill.metrics.evidence_successes == 6
    assert skill.pattern.action == "Profile {data}"
    assert skill.pattern.preconditions.keywords == ["profile"]


def test_file_names_in_the_action_become_placeholders() -> None:
    same = [outcome(i, action="Profile the quarterly file sales_q0.csv") for i in range(3)]
    for o in same:
        assert o.job is not None
        o.job.args["data"] = "sales_q0.csv"
    skill = only(extract(same, [], now=NOW))
    assert skill.pattern.action == "Profile the quarterly file {data}"
