"""Parameters and contrast: ranges the failures bound, and the text saying why."""

from __future__ import annotations

import math

from skills.extract import extract
from tests.skills.extract.batches import NAME, NOW, only, outcome, param, sales_batch
from workflows.contracts.patterns import SkillStep, name_problem


def test_ten_similar_outcomes_yield_one_candidate_with_typed_parameters() -> None:
    result = extract(sales_batch(), [], now=NOW)
    skill = only(result)
    assert result.versions == [] and result.updated == [] and result.skipped == []
    assert skill.status == "candidate" and skill.pattern.kind == "skill"
    assert skill.skill_id == f"{NAME}@v1" and name_problem(skill.pattern.name) is None
    data = param(skill, "data")
    assert (data.type, data.target, data.extensions) == ("file_path", "input", ["csv"])
    batch = param(skill, "batch_size")
    assert (batch.type, batch.default) == ("integer", 16)
    mode = param(skill, "mode")
    assert (mode.type, mode.options, mode.default) == ("enum", ["exact", "fast"], "fast")
    verbose = param(skill, "verbose")
    assert (verbose.type, verbose.default) == ("boolean", True)
    assert [p.name for p in skill.pattern.parameters] == ["batch_size", "data", "mode",
                                                           "verbose"]
    for p in skill.pattern.parameters:
        assert p.default is not None and p.problem(p.default) is None


def test_contrast_explains_the_failing_batch_size_and_bounds_its_maximum() -> None:
    skill = only(extract(sales_batch(), [], now=NOW))
    assert skill.pattern.contrast == (
        "batch_size ≤ 16 in 7 successes; 64 failed 3 times (out_of_memory)")
    batch = param(skill, "batch_size")
    assert batch.maximum == 16  # the largest success, not doubled: 64 failed
    assert batch.minimum == 4  # no failure below: halved
    assert batch.problem(32) is not None and batch.problem(8) is None


def test_range_is_widened_when_nothing_failed() -> None:
    batch = [outcome(i, batch=b) for i, b in enumerate([8, 16, 16, 12])]
    skill = only(extract(batch, [], now=NOW))
    p = param(skill, "batch_size")
    assert (p.minimum, p.maximum) == (4, 32)
    assert "no failures of this task type" in skill.pattern.contrast
    assert skill.metrics.evidence_failures == 0


def test_failures_below_every_success_bound_the_minimum() -> None:
    batch = ([outcome(i, batch=b) for i, b in enumerate([8, 16, 16])]
             + [outcome(9, "failed", batch=2), outcome(10, "failed", batch=1)])
    p = param(only(extract(batch, [], now=NOW)), "batch_size")
    assert (p.minimum, p.maximum) == (8, 32)


def test_failures_inside_the_successful_range_bound_nothing() -> None:
    timeout = SkillStep(agent="executor", phase="execute", detail="timeout after 600 s")
    batch = ([outcome(i, batch=b) for i, b in enumerate([8, 16, 16])]
             + [outcome(9, "failed", batch=16, steps=[timeout])])
    skill = only(extract(batch, [], now=NOW))
    p = param(skill, "batch_size")
    assert (p.minimum, p.maximum) == (4, 32)
    assert skill.pattern.contrast == ("1 failure(s) of this task type (timeout) are not "
                                      "explained by their arguments or job; the batch does not "
                                      "say why")


def test_failures_of_another_job_file_of_the_same_type_are_contrast_too() -> None:
    batch = ([outcome(i, batch=b) for i, b in enumerate([8, 16, 16])]
             + [outcome(9, "failed", batch=128, filename="other.py")])
    skill = only(extract(batch, [], now=NOW))
    assert param(skill, "batch_size").maximum == 16
    assert skill.pattern.contrast == (
        "batch_size ≤ 16 in 3 successes; 128 failed once (out_of_memory)")
    assert skill.metrics.evidence_failures == 0  # its own group had none
    assert any("other.py" in reason for reason in extract(batch, [], now=NOW).skipped)


def test_failures_of_another_script_version_and_unknown_cause_are_named() -> None:
    other = "import pandas\nimport sklearn\nraise SystemExit(1)\n"  # the same kind of job
    batch = ([outcome(i) for i in range(3)]
             + [outcome(9, "failed", batch=64, source=other, steps=[])])
    assert only(extract(batch, [], now=NOW)).pattern.contrast == (
        "batch_size ≤ 16 in 3 successes; 64 failed once (failed)\n"
        "1 failure(s) ran another version of profile.py than every success")


def test_text_arguments_that_only_failed_are_explained() -> None:
    batch = ([outcome(i, mode="fast") for i in range(3)]
             + [outcome(9, "failed", mode="turbo", batch=16)])
    skill = only(extract(batch, [], now=NOW))
    assert "mode was 'fast' in 3 successes; 'turbo' failed once (out_of_memory)" in (
        skill.pattern.contrast)
    assert param(skill, "mode").type == "string"  # one value: text with a default


def test_many_distinct_texts_stay_free_text_and_odd_names_stay_fixed() -> None:
    batch = [outcome(i, extra={"label": f"label-{i}", "2nd": 5}) for i in range(10)]
    skill = only(extract(batch, [], now=NOW))
    label = param(skill, "label")
    assert (label.type, label.default) == ("string", "label-0")
    assert skill.pattern.parameter("2nd") is None
    assert skill.pattern.job is not None and skill.pattern.job.args["2nd"] == 5


def test_non_finite_numbers_do_not_break_the_range() -> None:
    batch = [outcome(i, extra={"rate": r}) for i, r in enumerate([0.5, 0.25, math.nan, 0.5])]
    p = param(only(extract(batch, [], now=NOW)), "rate")
    assert (p.type, p.default, p.minimum, p.maximum) == ("number", 0.5, 0.125, 1.0)
