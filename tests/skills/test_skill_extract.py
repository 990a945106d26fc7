"""Extraction of skill and subagent patterns from a batch of outcomes, without a model."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime

import pytest

from skills.extract import MIN_SUCCESSES, Extraction, confidence, extract
from workflows.contracts.executive import PatchChange
from workflows.contracts.memory import task_type
from workflows.contracts.plan import Check, JobSpec, Scalar
from workflows.library.patterns import (
    Skill,
    SkillMetrics,
    SkillParameter,
    SkillPattern,
    SkillStep,
    TaskOutcome,
    name_problem,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ACTION = "Profile the sales table and report column statistics"
NAME = task_type(ACTION)
SOURCE = (
    "from __future__ import annotations\n"
    "import json, sys\n"
    "import os.path\n"
    "import pandas as pd\n"
    "from sklearn.metrics import r2_score\n"
    "from . import helpers\n"
    "def main():\n"
    "    import numpy.linalg\n"
    "    return pd, r2_score, numpy.linalg, json, sys, os, helpers\n"
)
OOM = SkillStep(agent="executor", phase="execute",
                detail="out_of_memory: ran out of memory at 1024 MiB")
CLEAN = [SkillStep(agent="implementer", phase="implement"),
         SkillStep(agent="executor", phase="execute")]
HALVE = PatchChange(field="args.batch_size", old_value=64, new_value=32,
                    reason="halve batch_size to fit in 1024 MiB")


def outcome(n: int, status: str = "completed", *, batch: Scalar = 16, mode: str = "fast",
            source: str | None = SOURCE, filename: str = "profile.py", action: str = ACTION,
            fixes: list[PatchChange] | None = None, steps: list[SkillStep] | None = None,
            extra: dict[str, Scalar] | None = None, run: str | None = None) -> TaskOutcome:
    """Task ``n`` of the sales profile: a csv input, a batch size and a mode."""
    data = f"sales_q{n}.csv"
    job = JobSpec(code=source or "print(1)", source=source, filename=filename,
                  args={"data": data, "batch_size": batch, "mode": mode, "verbose": True,
                        **(extra or {})},
                  expected_artifacts=["report.html"], expected_metrics=["rows", "mean"])
    failed_steps = [*CLEAN[:1], OOM]
    return TaskOutcome(
        run_id=run or f"run-{n:02d}", task_id="t1", action=action, status=status, job=job,
        goal="Understand the quarterly sales", input_names=[data, "notes.txt"],
        acceptance_criteria=["rows > 0", "report written"],
        checks=[Check(metric="rows", op=">", value=0)] + (
            [Check(metric="mean", op=">=", value=n)] if n % 2 else []),
        fixes=fixes or [],
        steps=steps if steps is not None else (CLEAN if status == "completed" else failed_steps))


def sales_batch() -> list[TaskOutcome]:
    """Seven successes at batch size 8 or 16, three out-of-memory failures at 64."""
    ok = [(16, "fast"), (16, "exact"), (16, "fast"), (8, "fast"), (16, "fast"), (8, "exact"),
          (16, "fast")]
    return ([outcome(i, batch=b, mode=m) for i, (b, m) in enumerate(ok)]
            + [outcome(10 + i, "failed", batch=64) for i in range(3)])


def only(result: Extraction) -> Skill:
    assert len(result.new) == 1, result.skipped
    return result.new[0]


def param(skill: Skill, name: str) -> SkillParameter:
    found = skill.pattern.parameter(name)
    assert found is not None, f"no parameter {name}"
    return found


# --- one batch, one candidate --------------------------------------------------------------


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


def test_template_job_takes_the_defaults_and_the_expected_outputs() -> None:
    skill = only(extract(sales_batch(), [], now=NOW))
    job = skill.pattern.job
    assert job is not None and job.source == SOURCE and job.filename == "profile.py"
    assert job.args == {"data": "sales_q0.csv", "batch_size": 16, "mode": "fast",
                        "verbose": True}
    assert (job.expected_artifacts, job.expected_metrics) == (["report.html"], ["rows", "mean"])
    assert skill.pattern.signature.output_types == ["html", "mean", "rows"]


def test_postconditions_are_the_checks_every_success_had() -> None:
    skill = only(extract(sales_batch(), [], now=NOW))
    assert skill.pattern.checks == [Check(metric="rows", op=">", value=0)]
    assert skill.pattern.acceptance_criteria == ["rows > 0", "report written"]
    assert skill.pattern.action == ACTION


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
    other = "import pandas\nraise SystemExit(1)\n"
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


# --- preconditions, signature, steps -------------------------------------------------------


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
    assert len({task_type(o.action) for o in batch}) == 1  # the type stops at eight words
    keywords = only(extract(batch, [], now=NOW)).pattern.preconditions.keywords
    assert keywords == ["area", "column", "profile", "region", "report", "sales",
                        "statistics", "table", "wide", "north"]  # most actions first
    assert "south" not in keywords and "the" not in keywords and "by" not in keywords


def test_steps_are_the_most_common_sequence_among_successes() -> None:
    other = [SkillStep(agent="implementer", phase="implement", detail="wrote a new job"),
             *CLEAN]
    batch = [outcome(i, steps=other if i == 0 else CLEAN) for i in range(4)]
    assert only(extract(batch, [], now=NOW)).pattern.steps == CLEAN


def test_file_names_in_the_action_become_placeholders() -> None:
    batch = [outcome(i, action=f"Profile sales_q{i}.csv") for i in range(3)]
    # the task type keeps the file's words, so each action is its own type
    assert len({task_type(o.action) for o in batch}) == 3
    same = [outcome(i, action="Profile the quarterly file sales_q0.csv") for i in range(3)]
    for o in same:
        assert o.job is not None
        o.job.args["data"] = "sales_q0.csv"
    skill = only(extract(same, [], now=NOW))
    assert skill.pattern.action == "Profile the quarterly file {data}"


# --- groups that yield nothing -------------------------------------------------------------


def test_fewer_than_three_successes_are_skipped_with_the_reason() -> None:
    batch = [outcome(0), outcome(1), outcome(2, "failed", batch=64)]
    result = extract(batch, [], now=NOW)
    assert result.new == [] and result.versions == [] and result.updated == []
    assert result.skipped == [f"{NAME} (profile.py): 2 successful of 3 outcome(s); a pattern "
                              f"needs at least {MIN_SUCCESSES} successes"]


def test_an_unparsable_source_skips_the_group_and_says_where() -> None:
    broken = "import pandas\ndef main(:\n    pass\n"
    result = extract([outcome(i, source=broken) for i in range(4)], [], now=NOW)
    assert result.new == []
    assert len(result.skipped) == 1
    assert result.skipped[0].startswith(f"{NAME} (profile.py): the job source does not parse "
                                        "(line 2")


def test_a_source_with_a_null_byte_is_refused_not_fatal() -> None:
    result = extract([outcome(i, source="import pandas\x00\n") for i in range(3)], [], now=NOW)
    assert result.new == [] and "does not parse" in result.skipped[0]


def test_outcomes_without_a_resolved_job_or_with_no_verdict_do_not_count() -> None:
    batch = [outcome(i, source=None) for i in range(2)] + [outcome(5, "cancelled"),
                                                           outcome(6, "deferred")]
    batch += [outcome(i) for i in range(7, 10)]
    result = extract(batch, [], now=NOW)
    skill = only(result)
    assert (skill.metrics.evidence_successes, skill.metrics.evidence_failures) == (3, 0)
    assert result.skipped == ["2 outcome(s) had no resolved job (no source) and were not "
                              "considered"]


def test_one_pattern_per_task_type_the_best_supported_job_wins() -> None:
    batch = ([outcome(i, filename="a.py") for i in range(3)]
             + [outcome(3 + i, filename="b.py") for i in range(4)])
    result = extract(batch, [], now=NOW)
    skill = only(result)
    assert skill.pattern.job is not None and skill.pattern.job.filename == "b.py"
    assert result.skipped == [f"{NAME} (a.py): 3 successes, but {NAME} (b.py) of the same "
                              "task type had more support; one pattern per task type and batch"]


# --- skill or subagent ---------------------------------------------------------------------


def test_successes_that_needed_fixes_make_a_subagent_with_that_memory() -> None:
    smaller = PatchChange(field="resources.timeout_s", old_value=600, new_value=1200,
                          reason="double the timeout")
    batch = ([outcome(i, batch=32, fixes=[HALVE]) for i in range(3)]
             + [outcome(3, batch=32, fixes=[HALVE, smaller]), outcome(4, batch=32)]
             + [outcome(9, "failed", batch=64)])
    skill = only(extract(batch, [], now=NOW))
    assert skill.pattern.kind == "subagent"
    assert skill.pattern.recovery == [HALVE, smaller]  # distinct, most proven first
    assert "args.batch_size 64 → 32 led to 4 successes (halve batch_size to fit in 1024 MiB)" in (
        skill.pattern.guideline)
    assert skill.pattern.guideline.startswith(f"You are the specialist for {NAME} tasks")
    assert "args.batch_size 64 → 32 led to 4 successes" in skill.pattern.contrast


def test_debugging_steps_make_a_subagent_even_without_fixes() -> None:
    debug = [*CLEAN, SkillStep(agent="debugger-1", phase="debug", detail="compared 3 fixes")]
    batch = [outcome(i, steps=debug if i < 2 else CLEAN) for i in range(4)]
    skill = only(extract(batch, [], now=NOW))
    assert skill.pattern.kind == "subagent" and skill.pattern.recovery == []


def test_fixes_in_fewer_than_half_the_successes_stay_a_skill() -> None:
    batch = [outcome(0, fixes=[HALVE])] + [outcome(i) for i in range(1, 4)]
    skill = only(extract(batch, [], now=NOW))
    assert skill.pattern.kind == "skill" and skill.pattern.recovery == []


# --- confidence and approval ---------------------------------------------------------------


def test_confidence_is_success_ratio_times_support() -> None:
    assert confidence(7, 3) == 0.49
    assert confidence(10, 0) == 1.0
    assert confidence(3, 0) == 0.3
    assert confidence(20, 5) == 0.8
    assert confidence(0, 0) == 0.0


def test_a_confident_pattern_is_approved_automatically() -> None:
    batch = [outcome(i) for i in range(10)]
    skill = only(extract(batch, [], now=NOW, auto_approve=0.9))
    assert (skill.status, skill.confidence) == ("active", 1.0)
    assert skill.note == "approved automatically: confidence 1.00 ≥ 0.90"
    held = only(extract(sales_batch(), [], now=NOW, auto_approve=0.9))
    assert held.status == "candidate" and "awaiting approval" in held.note


def test_auto_approve_outside_its_range_is_refused() -> None:
    with pytest.raises(ValueError, match="auto_approve"):
        extract(sales_batch(), [], now=NOW, auto_approve=1.5)


# --- the existing library ------------------------------------------------------------------


def existing(version: int = 1, *, status: str = "active", source: str = SOURCE,
             succeeded: int = 8, used: int = 10) -> Skill:
    skill = only(extract(sales_batch(), [], now=NOW))
    assert skill.pattern.job is not None
    job = skill.pattern.job.model_copy(update={"source": source})
    return Skill.model_validate({
        **skill.model_dump(), "status": status,
        "pattern": {**skill.pattern.model_dump(), "version": version, "job": job.model_dump(),
                    "source_runs": ["old-run", "run-00"]},
        "metrics": SkillMetrics(used=used, succeeded=succeeded).model_dump()})


def test_the_same_job_again_grows_the_known_pattern() -> None:
    known = existing()
    batch = [outcome(i, run=f"new-{i}") for i in range(3)] + [outcome(3, run="run-00")]
    result = extract(batch, [known], now=NOW)
    assert result.new == [] and result.versions == []
    grown = result.updated[0]
    assert grown.skill_id == known.skill_id and grown.status == "active"
    assert (grown.metrics.evidence_successes, grown.metrics.evidence_failures) == (4, 0)
    assert grown.pattern.source_runs == ["old-run", "run-00", "new-0", "new-1", "new-2"]
    assert grown.updated_at == NOW and grown.metrics.used == 10


def test_a_different_job_becomes_a_candidate_version_after_the_highest() -> None:
    library = [existing(1, source="print('v1')\n", succeeded=7),
               existing(2, status="retired", source="print('v2')\n")]
    result = extract(sales_batch(), library, now=NOW, auto_approve=0.1)
    assert result.new == [] and result.updated == []
    version = result.versions[0]
    assert version.skill_id == f"{NAME}@v3" and version.status == "candidate"
    assert version.note.startswith(f"new version of {NAME}: its job differs from {NAME}@v1's")


def test_a_worse_job_than_the_active_version_makes_no_version() -> None:
    library = [existing(1, source="print('v1')\n", succeeded=9, used=10)]
    result = extract(sales_batch(), library, now=NOW)  # 70 % in the batch, 90 % active
    assert result.versions == [] and result.new == []
    assert result.skipped == [f"{NAME} (profile.py): a different job succeeded in 70% of the "
                              f"batch, below the 90% of the active {NAME}@v1; no new version"]


def test_a_family_all_retired_starts_again_with_the_next_number() -> None:
    library = [existing(1, status="retired"), existing(2, status="retired")]
    result = extract(sales_batch(), library, now=NOW)
    assert [s.skill_id for s in result.new] == [f"{NAME}@v3"]
    assert result.updated == []


# --- determinism ---------------------------------------------------------------------------


def test_the_same_batch_in_any_order_gives_the_same_patterns() -> None:
    batch = sales_batch() + [outcome(20 + i, action="Train the demand model") for i in range(3)]
    first = extract(batch, [], now=NOW)
    shuffled = list(batch)
    random.Random(7).shuffle(shuffled)
    second = extract(shuffled, [], now=NOW)
    assert [s.model_dump() for s in first.new] == [s.model_dump() for s in second.new]
    assert first.skipped == second.skipped
    assert [s.pattern.name for s in first.new] == sorted(s.pattern.name for s in first.new)
    assert len(first.new) == 2


def test_a_repeated_outcome_counts_once() -> None:
    batch = sales_batch()
    skill = only(extract([*batch, *batch[:3]], [], now=NOW))
    assert (skill.metrics.evidence_successes, skill.metrics.evidence_failures) == (7, 3)


def test_oversized_outcomes_are_clipped_to_the_pattern_limits() -> None:
    long_action = "Profile the sales table " + "with extraordinarily many words " * 120
    steps = [SkillStep(agent=f"agent-{i}", phase="execute", detail="x" * 200) for i in range(90)]
    extra: dict[str, Scalar] = {f"knob_{i:02d}": i for i in range(40)}
    extra["tag"] = "t" * 5000
    batch = [outcome(i, action=long_action, steps=steps, extra=extra) for i in range(3)]
    for o in batch:
        o.checks.extend(Check(metric=f"m{i}", op=">", value=i) for i in range(40))
    skill = only(extract(batch, [], now=NOW))
    p = skill.pattern
    assert len(p.description) <= 1024 and len(p.action) <= 4000 and len(p.context) <= 4000
    assert len(p.steps) == 64 and len(p.checks) == 32 and len(p.parameters) == 32
    assert p.job is not None and p.job.args["tag"] == "t" * 5000  # fixed, not lost
    assert SkillPattern.model_validate(p.model_dump()) == p
