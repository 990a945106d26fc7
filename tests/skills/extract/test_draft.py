"""One group -> one draft: its job, kind, prose and limits, or why there is none."""

from __future__ import annotations

from skills.extract import MIN_SUCCESSES, confidence, extract
from tests.skills.extract.batches import (
    CLEAN,
    HALVE,
    KIND,
    NOW,
    SOURCE,
    only,
    outcome,
    sales_batch,
)
from workflows.contracts.patterns import SkillPattern, SkillStep
from workflows.contracts.plan import Check, Scalar
from workflows.contracts.reflection import PatchChange


def test_template_job_takes_the_defaults_and_the_expected_outputs() -> None:
    skill = only(extract(sales_batch(), [], now=NOW))
    job = skill.pattern.job
    assert job is not None and job.source == SOURCE and job.filename == "profile.py"
    assert job.args == {"data": "sales_q0.csv", "batch_size": 16, "mode": "fast",
                        "verbose": True}
    assert (job.expected_artifacts, job.expected_metrics) == (["report.html"], ["rows", "mean"])
    assert skill.pattern.signature.output_types == ["html", "mean", "rows"]


def test_fewer_than_three_successes_are_skipped_with_the_reason() -> None:
    batch = [outcome(0), outcome(1), outcome(2, "failed", batch=64)]
    result = extract(batch, [], now=NOW)
    assert result.new == [] and result.versions == [] and result.updated == []
    assert result.skipped == [f"{KIND} (profile.py): 2 successful of 3 outcome(s); a pattern "
                              f"needs at least {MIN_SUCCESSES} successes"]


def test_an_unparsable_source_skips_the_group_and_says_where() -> None:
    broken = "import pandas\ndef main(:\n    pass\n"
    result = extract([outcome(i, source=broken) for i in range(4)], [], now=NOW)
    assert result.new == []
    assert len(result.skipped) == 1
    assert result.skipped[0].startswith("profile:-|csv+txt|mean+rows (profile.py): the job "
                                        "source does not parse "
                                        "(line 2")


def test_a_source_with_a_null_byte_is_refused_not_fatal() -> None:
    result = extract([outcome(i, source="import pandas\x00\n") for i in range(3)], [], now=NOW)
    assert result.new == [] and "does not parse" in result.skipped[0]


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
    assert skill.pattern.guideline.startswith(f"You are the specialist for {KIND} tasks")
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


def test_confidence_is_success_ratio_times_support() -> None:
    assert confidence(7, 3) == 0.49
    assert confidence(10, 0) == 1.0
    assert confidence(3, 0) == 0.3
    assert confidence(20, 5) == 0.8
    assert confidence(0, 0) == 0.0


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
