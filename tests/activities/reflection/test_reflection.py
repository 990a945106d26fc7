"""Reflection's rule table: each failure pattern gets its diagnosis, patch and decision."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.testing import ActivityEnvironment

from activities.patches.apply import apply_patch, patch_checksum
from activities.reflection.reflection import Reflection, diagnose, note_id_for
from activities.review.ops import review_ops_spec
from activities.review.safety.check import review_quality_safety_source
from activities.sandbox.classify import Ending, classify
from activities.sandbox.limits import Limits
from workflows.contracts.execution import Artifact, CheckResult, ExecutionOutcome, Verification
from workflows.contracts.plan import Check, JobSpec, Resources, Scalar
from workflows.contracts.policy import ReviewPolicy
from workflows.contracts.reflection import DiagnoseInput, FailureKind, Patch
from workflows.contracts.verdicts import Finding, ReviewInput, ReviewVerdict

WORKSPACE = "/data/work/run/t1/attempt-1"


def job(args: dict[str, Scalar] | None = None, **fields: Any) -> JobSpec:
    return JobSpec(code="print(1)", source="print(1)", filename="job.py", args=args or {},
                   **fields)


def outcome_from(stderr: str, *, code: int | None = 1, sig: int | None = None,
                 stopped: str | None = None, memory_mb: int = 1024) -> ExecutionOutcome:
    """An outcome worded exactly as the sandbox's classifier words it."""
    limits = Limits.for_job(Resources(memory_mb=memory_mb, timeout_s=60), max_memory_mb=8192,
                            max_timeout_s=3600, processes=64, open_files=256, file_size_mb=100)
    kind, reason = classify(Ending(code, sig, stopped, stderr), limits=limits,
                            workspace=WORKSPACE, network_isolated=True)
    return ExecutionOutcome(outcome=kind, reason=reason, exit_code=code, signal=sig,
                            stderr_tail=stderr, workspace=WORKSPACE)


def traceback(line: str) -> str:
    return f'Traceback (most recent call last):\n  File "job.py", line 3, in <module>\n{line}\n'


def failure(kind: FailureKind, spec: JobSpec, *, attempt: int = 1,
            **fields: Any) -> DiagnoseInput:
    return DiagnoseInput(run_id="run-1", task_id="t1", kind=kind, attempt=attempt, job=spec,
                         **fields)


OOM = traceback("MemoryError")


def timed_out() -> ExecutionOutcome:
    return outcome_from("", code=None, sig=9, stopped="timeout")


# --- execution: out of memory --------------------------------------------------------------


def test_oom_halves_batch_size_and_keeps_it_an_integer() -> None:
    spec = job({"input": "data.csv", "batch_size": 64, "seed": 7})
    note = diagnose(failure("execution", spec, outcome=outcome_from(OOM)))
    assert (note.root_cause, note.likely_fix) == ("out_of_memory", "reduce_batch_size")
    assert note.patch is not None and note.patched_job is not None
    [change] = note.patch.changes
    assert (change.field, change.old_value, change.new_value) == ("args.batch_size", 64, 32)
    assert note.patched_job.args == {"input": "data.csv", "batch_size": 32, "seed": 7}
    assert type(note.patched_job.args["batch_size"]) is int
    assert note.patched_job.resources == spec.resources  # memory is never raised
    # known pattern + minimal patch: 0.50 + 0.25 + 0.15
    assert (note.confidence, note.decision) == (0.90, "retry")
    assert note.patch.risk == pytest.approx(0.05 + 0.30 * 0.10)


def test_oom_prefers_batch_size_over_a_generic_size_and_rounds_odd_values_down() -> None:
    spec = job({"n": 1000, "mini_batch": 5})
    note = diagnose(failure("execution", spec, outcome=outcome_from(OOM)))
    assert note.patched_job is not None and note.patched_job.args == {"n": 1000, "mini_batch": 2}


def test_oom_with_batch_size_already_one_offers_no_patch() -> None:
    note = diagnose(failure("execution", job({"batch_size": 1}), outcome=outcome_from(OOM)))
    assert note.root_cause == "out_of_memory" and note.patch is None
    assert note.decision == "defer" and "batch_size=1" in note.reason
    assert note.likely_fix == "change_the_code"  # no smaller batch is left to suggest


def test_oom_without_a_work_argument_says_which_argument_would_help() -> None:
    note = diagnose(failure("execution", job({"seed": 3, "fraction": 0.5}),
                            outcome=outcome_from(OOM)))
    assert note.patch is None and note.decision == "defer"
    assert "batch_size" in note.reason and "resources.memory_mb" in note.reason
    # The job has no batch size: the fix named is not to reduce one.
    assert (note.root_cause, note.likely_fix) == ("out_of_memory", "change_the_code")


def test_a_deferral_speaks_of_a_next_cycle_only_in_a_study() -> None:
    plain = diagnose(failure("execution", job({"seed": 3}), outcome=outcome_from(OOM)))
    assert plain.decision == "defer" and "cycle" not in plain.reason
    assert plain.reason.endswith("not retried automatically: the task ends deferred)")
    cycle = failure("execution", job({"seed": 3}), outcome=outcome_from(OOM)).model_copy(
        update={"run_id": "assay-study-fit-1a2b3c4d5e.cycle-2"})
    assert diagnose(cycle).reason.endswith("deferred to the next planning cycle)")


def test_oom_does_not_halve_fractions() -> None:
    note = diagnose(failure("execution", job({"sample_size": 0.8}), outcome=outcome_from(OOM)))
    assert note.patch is None and "cannot be reduced" in note.reason


# --- execution: timeout --------------------------------------------------------------------


def test_timeout_doubles_the_time_limit() -> None:
    spec = job(resources=Resources(timeout_s=600))
    note = diagnose(failure("execution", spec, outcome=timed_out()))
    assert note.root_cause == "timeout" and note.patched_job is not None
    assert note.patched_job.resources.timeout_s == 1200
    assert note.patch is not None
    assert note.patch.safety_checks["resource_ceiling"] == "unchanged"


def test_timeout_doubling_is_capped_by_the_policy() -> None:
    spec = job(resources=Resources(timeout_s=600))
    policy = ReviewPolicy(max_timeout_s=900)
    note = diagnose(failure("execution", spec, outcome=timed_out(),
                            policy=policy))
    assert note.patched_job is not None and note.patched_job.resources.timeout_s == 900


def test_timeout_at_the_ceiling_reduces_the_iterations_instead() -> None:
    spec = job({"n_permutations": 10_000, "alpha": 0.05}, resources=Resources(timeout_s=900))
    note = diagnose(failure("execution", spec, outcome=timed_out(),
                            policy=ReviewPolicy(max_timeout_s=900)))
    assert (note.root_cause, note.likely_fix) == ("timeout", "reduce_iterations")
    assert note.patched_job is not None
    assert note.patched_job.args["n_permutations"] == 5000
    assert note.patched_job.resources.timeout_s == 900


def test_timeout_at_the_ceiling_without_iterations_defers() -> None:
    spec = job({"alpha": 0.05}, resources=Resources(timeout_s=900))
    note = diagnose(failure("execution", spec, outcome=timed_out(),
                            policy=ReviewPolicy(max_timeout_s=900)))
    assert note.patch is None and note.decision == "defer" and "faster" in note.reason
    assert (note.root_cause, note.likely_fix) == ("timeout", "change_the_code")


# --- execution: other outcomes -------------------------------------------------------------


def test_missing_module_is_named_and_not_patched() -> None:
    outcome = outcome_from(traceback("ModuleNotFoundError: No module named 'sklearn.linear_model'"))
    assert outcome.outcome == "missing_dependency"
    note = diagnose(failure("execution", job(), outcome=outcome))
    assert note.root_cause == "missing_dependency"
    assert note.likely_fix == ("add sklearn to the job's requirements, or name an environment "
                               "that has it (environment: science)")
    assert "cannot install" not in note.reason and "sandbox workers" not in note.reason
    assert note.patch is None and note.decision == "defer"
    assert "'sklearn.linear_model'" in note.reason


def test_sandbox_violation_is_unsafe_code_without_patch() -> None:
    outcome = outcome_from(traceback("socket.gaierror: [Errno -3] Temporary failure in name "
                                     "resolution"))
    assert outcome.outcome == "sandbox_violation"
    note = diagnose(failure("execution", job({"batch_size": 8}), outcome=outcome))
    assert note.root_cause == "unsafe_code" and note.patch is None
    assert note.decision == "defer" and "network" in note.reason


@pytest.mark.parametrize(("line", "root_cause"), [
    ("KeyError: 'price'", "missing_key"),
    ("FileNotFoundError: [Errno 2] No such file or directory: 'prices.csv'",
     "missing_input_file"),
    ("ValueError: could not convert string to float: 'n/a'", "invalid_value"),
])
def test_python_errors_are_diagnosed_with_evidence_but_not_patched(line: str,
                                                                   root_cause: str) -> None:
    note = diagnose(failure("execution", job({"input": "prices.csv"}),
                            outcome=outcome_from(traceback(line))))
    assert note.root_cause == root_cause and note.patch is None and note.decision == "defer"
    assert any(line.split(":")[0] in e for e in note.evidence)
    assert note.confidence == 0.75  # known, but nothing offered


def test_file_not_found_evidence_names_the_argument_holding_the_path() -> None:
    line = "FileNotFoundError: [Errno 2] No such file or directory: 'prices.csv'"
    note = diagnose(failure("execution", job({"input": "prices.csv"}),
                            outcome=outcome_from(traceback(line))))
    assert "'prices.csv' is the value of argument input" in note.evidence


@pytest.mark.parametrize("outcome", [
    ExecutionOutcome(outcome="killed", reason="killed by SIGTERM"),
    ExecutionOutcome(outcome="nonzero_exit", reason="exited with status 3; see stderr",
                     stderr_tail="something odd\n"),
    ExecutionOutcome(outcome="nonzero_exit", reason="x",
                     stderr_tail=traceback("mylib.WeirdError: boom")),
])
def test_anything_else_is_unknown_with_confidence_020(outcome: ExecutionOutcome) -> None:
    note = diagnose(failure("execution", job({"batch_size": 8}), outcome=outcome))
    assert (note.root_cause, note.likely_fix) == ("unknown", "manual_review")
    assert (note.confidence, note.decision, note.patch) == (0.20, "defer", None)


# --- approval rejections -------------------------------------------------------------------


def verdict(reviewer: str, ok: bool, *critical: Finding, **details: Any) -> ReviewVerdict:
    return ReviewVerdict.model_validate({
        "reviewer": reviewer, "verdict": "APPROVE" if ok else "REJECT", "confidence": 0.9,
        "critical": [f.model_dump() for f in critical], "details": details})


def finding(code: str, message: str = "") -> Finding:
    return Finding(code=code, message=message or code, severity="critical")


def test_undeclared_metric_is_added_to_expected_metrics() -> None:
    spec = job(expected_metrics=["rmse"])
    verdicts = [verdict("ops", False, finding("undeclared_metric",
                                              "check on metric 'p_value' is not declared")),
                verdict("quality_safety", True), verdict("infrastructure", True)]
    note = diagnose(failure("rejected", spec, verdicts=verdicts))
    assert note.root_cause == "undeclared_metric" and note.patched_job is not None
    assert note.patched_job.expected_metrics == ["rmse", "p_value"]
    # known + minimal - divergence (one reviewer rejected, two approved) = 0.70
    assert (note.confidence, note.decision) == (0.70, "retry_logged")


def test_undeclared_metric_names_come_from_details_first() -> None:
    verdicts = [verdict("ops", False, finding("undeclared_metric", "see 'nothing'"),
                        undeclared_metrics=["r2", "mae"])]
    note = diagnose(failure("rejected", job(), verdicts=verdicts))
    assert note.patched_job is not None and note.patched_job.expected_metrics == ["r2", "mae"]


def test_resources_over_policy_are_clamped_to_the_ceiling() -> None:
    spec = job(resources=Resources(memory_mb=32_000, timeout_s=600))
    verdicts = [verdict("infrastructure", False,
                        finding("resources_over_policy", "memory 32000 MiB > 8192"))]
    note = diagnose(failure("rejected", spec, verdicts=verdicts))
    assert note.root_cause == "resources_over_policy" and note.patch is not None
    assert note.patched_job is not None and note.patched_job.resources.memory_mb == 8192
    assert note.patch.safety_checks["resource_ceiling"] == "narrowed"
    assert note.decision == "retry"


def test_unaddressed_critical_findings_cost_the_known_pattern_bonus() -> None:
    verdicts = [verdict("ops", False, finding("undeclared_metric", "metric 'auc'"),
                        finding("criteria_unmapped", "criterion 2 has no check"))]
    note = diagnose(failure("rejected", job(), verdicts=verdicts))
    assert note.patch is not None and note.confidence == 0.65 and note.decision == "human"
    assert "criteria_unmapped" in note.reason


def test_quality_safety_critical_is_unsafe_code_with_no_patch() -> None:
    verdicts = [verdict("ops", False, finding("undeclared_metric", "metric 'auc'")),
                verdict("quality_safety", False, finding("subprocess", "calls os.system"))]
    note = diagnose(failure("rejected", job(), verdicts=verdicts))
    assert note.root_cause == "unsafe_code" and note.patch is None and note.decision == "defer"


def test_missing_package_rejection_names_it_and_offers_no_patch() -> None:
    verdicts = [verdict("infrastructure", False,
                        finding("missing_package", "requirement 'statsmodels>=0.14' is not "
                                                   "installed"))]
    note = diagnose(failure("rejected", job(requirements=["statsmodels>=0.14"]),
                            verdicts=verdicts))
    assert note.root_cause == "missing_dependency" and note.patch is None
    assert "statsmodels>=0.14" in note.likely_fix and note.decision == "defer"
    assert "requirements" in note.likely_fix and "environment: science" in note.likely_fix
    assert "cannot install" not in note.reason and "sandbox workers" not in note.reason


def test_package_version_rejection_is_a_version_problem() -> None:
    verdicts = [verdict("infrastructure", False,
                        finding("package_version", "requirement 'numpy>=9' is not met: numpy "
                                                   "2.1 is installed"))]
    note = diagnose(failure("rejected", job(requirements=["numpy>=9"]), verdicts=verdicts))
    assert note.root_cause == "dependency_version" and "numpy>=9" in note.likely_fix
    assert note.patch is None


def test_syntax_error_is_a_code_error_not_unsafe_code() -> None:
    verdicts = [verdict("ops", False, finding("syntax_error", "invalid syntax")),
                verdict("quality_safety", False, finding("syntax_error", "invalid syntax"))]
    note = diagnose(failure("rejected", job(), verdicts=verdicts))
    assert note.root_cause == "code_error" and note.patch is None and note.decision == "defer"


def test_more_memory_than_the_machine_has_is_clamped_to_its_total() -> None:
    spec = job(resources=Resources(memory_mb=6000))
    verdicts = [verdict("infrastructure", False, finding("memory_exceeds_total", "too much"),
                        memory_total_mb=4000)]
    note = diagnose(failure("rejected", spec, verdicts=verdicts))
    assert note.patched_job is not None and note.patched_job.resources.memory_mb == 4000
    assert note.decision == "retry"


def test_rejection_nobody_explains_is_unknown() -> None:
    note = diagnose(failure("rejected", job(), verdicts=[verdict("ops", False)]))
    assert (note.root_cause, note.confidence, note.decision) == ("unknown", 0.20, "defer")


# --- with the real reviewers --------------------------------------------------------------


def review_input(spec: JobSpec, checks: list[Check], policy: ReviewPolicy) -> ReviewInput:
    return ReviewInput(task_id="t1", action="fit a model", acceptance_criteria=["p < 0.05"],
                       checks=checks, job=spec, policy=policy)


def test_ops_rejection_is_patched_and_the_patched_job_passes_ops_review() -> None:
    src = "import json\njson.dump({'rmse': 1.0, 'p_value': 0.01, 'label': 'yes'}, " \
          "open('metrics.json', 'w'))\n"
    spec = JobSpec(code=src, source=src, filename="job.py", expected_metrics=["rmse"],
                   resources=Resources(memory_mb=16_000, timeout_s=600))
    checks = [Check(metric="p_value", op="<", value=0.05),
              Check(metric="label", op="==", value="yes")]
    policy = ReviewPolicy(max_memory_mb=4096)
    first = review_ops_spec(review_input(spec, checks, policy))
    assert first.verdict == "REJECT"
    note = diagnose(failure("rejected", spec, verdicts=[first], policy=policy))
    assert note.patched_job is not None and note.patch is not None
    assert note.patched_job.expected_metrics == ["rmse", "p_value", "label"]  # not 'yes'
    assert note.patched_job.resources.memory_mb == 4096
    assert note.patch.safety_checks["resource_ceiling"] == "narrowed"
    second = review_ops_spec(review_input(note.patched_job, checks, policy))
    assert second.verdict == "APPROVE", second.critical


def test_quality_safety_rejection_of_a_subprocess_is_unsafe_code() -> None:
    src = "import subprocess\nsubprocess.run(['ls'])\n"
    spec = JobSpec(code=src, source=src, filename="job.py", expected_metrics=["x"])
    verdicts = [review_ops_spec(review_input(spec, [], ReviewPolicy())),
                review_quality_safety_source(review_input(spec, [], ReviewPolicy()))]
    note = diagnose(failure("rejected", spec, verdicts=verdicts))
    assert note.root_cause == "unsafe_code" and "subprocess" in note.reason
    assert note.patch is None and note.decision == "defer"


# --- verification --------------------------------------------------------------------------


def artifact(name: str) -> Artifact:
    return Artifact(name=name, size=3, sha256="0" * 64, path=f"{WORKSPACE}/{name}")


def test_missing_artifact_after_success_asks_for_a_relink() -> None:
    spec = job(expected_artifacts=["results.csv", "plot.png"], expected_metrics=["rmse"])
    outcome = ExecutionOutcome(outcome="succeeded", artifacts=[artifact("plot.png")],
                               metrics={"rmse": 0.3}, workspace=WORKSPACE)
    ver = Verification(passed=False, missing=["artifact 'results.csv' was not produced"],
                       artifacts=[artifact("plot.png")])
    note = diagnose(failure("verification", spec, outcome=outcome, verification=ver))
    assert (note.root_cause, note.likely_fix) == ("missing_artifact", "rescan_and_relink")
    assert list(note.relink) == ["results.csv"] and note.patch is None
    assert (note.confidence, note.decision) == (0.90, "retry")


def test_missing_metrics_without_metrics_file_relinks_metrics_json() -> None:
    spec = job(expected_metrics=["rmse"])
    outcome = ExecutionOutcome(outcome="succeeded", workspace=WORKSPACE)
    ver = Verification(passed=False, missing=["metric 'rmse' missing from metrics.json"])
    note = diagnose(failure("verification", spec, outcome=outcome, verification=ver))
    assert note.root_cause == "missing_artifact" and list(note.relink) == ["metrics.json"]


def test_metric_missing_from_an_existing_metrics_file_is_not_relinked() -> None:
    spec = job(expected_metrics=["rmse"])
    outcome = ExecutionOutcome(outcome="succeeded", artifacts=[artifact("metrics.json")],
                               metrics={"mae": 1.0})
    ver = Verification(passed=False, missing=["metric 'rmse' missing from metrics.json"])
    note = diagnose(failure("verification", spec, outcome=outcome, verification=ver))
    assert note.root_cause == "missing_metric" and not note.relink and note.decision == "defer"


def test_failed_check_on_a_present_metric_is_acceptance_not_met() -> None:
    check = Check(metric="p_value", op="<", value=0.05)
    outcome = ExecutionOutcome(outcome="succeeded", metrics={"p_value": 0.2})
    ver = Verification(passed=False, checks=[CheckResult(check=check, passed=False, actual=0.2,
                                                         reason="p_value = 0.2, expected < 0.05")])
    note = diagnose(failure("verification", job(expected_metrics=["p_value"]), outcome=outcome,
                            verification=ver))
    assert note.root_cause == "acceptance_not_met" and note.patch is None
    assert not note.relink and note.decision == "defer" and "0.2" in note.reason



def test_a_malformed_estimate_is_invalid_metrics_naming_it() -> None:
    bad = {"value": 0.7, "ci": [0.4, 0.6], "level": 0.95}
    problem = "metric 'r2': value 0.7 lies outside its interval [0.4, 0.6]"
    outcome = ExecutionOutcome(outcome="succeeded", metrics={"r2": bad},
                               artifacts=[artifact("metrics.json")])
    ver = Verification(passed=False, missing=[problem])
    note = diagnose(failure("verification", job(expected_metrics=["r2"]), outcome=outcome,
                            verification=ver))
    assert (note.root_cause, note.likely_fix) == ("invalid_metrics", "fix_metrics_output")
    assert problem in note.reason


def test_a_failed_check_on_an_estimates_bound_is_acceptance_not_met() -> None:
    check = Check(metric="r2.ci_low", op=">=", value=0.45)
    estimate = {"value": 0.49, "ci": [0.421, 0.55], "level": 0.95}
    outcome = ExecutionOutcome(outcome="succeeded", metrics={"r2": estimate})
    ver = Verification(passed=False, checks=[CheckResult(check=check, passed=False,
                                                         actual=0.421, reason="r2.ci_low")])
    note = diagnose(failure("verification", job(expected_metrics=["r2"]), outcome=outcome,
                            verification=ver))
    assert note.root_cause == "acceptance_not_met"

# --- the note as a whole -------------------------------------------------------------------


def test_note_id_is_deterministic_and_depends_on_the_attempt() -> None:
    a = failure("execution", job(), outcome=outcome_from(OOM))
    b = failure("execution", job(), attempt=2, outcome=outcome_from(OOM))
    assert note_id_for(a) == note_id_for(a.model_copy()) != note_id_for(b)
    assert note_id_for(a).startswith("ref-") and len(note_id_for(a)) == 16


def test_same_failure_gives_the_same_note_and_patch_checksum() -> None:
    req = failure("execution", job({"batch_size": 64}), outcome=outcome_from(OOM))
    first, second = diagnose(req), diagnose(req)
    assert first == second
    assert first.patch is not None and first.patch.sha256 == patch_checksum(first.patch)


def test_a_patch_already_tried_is_dropped_and_the_note_says_why() -> None:
    spec = job({"batch_size": 64})
    tried = diagnose(failure("execution", spec, outcome=outcome_from(OOM))).patch
    assert tried is not None
    note = diagnose(failure("execution", spec, attempt=2, outcome=outcome_from(OOM),
                            previous_patches=[tried]))
    assert note.patch is None and note.decision == "defer"
    assert f"already tried ({tried.patch_id})" in note.reason


def test_third_attempt_lowers_confidence_to_a_logged_retry() -> None:
    note = diagnose(failure("execution", job({"batch_size": 64}), attempt=3,
                            outcome=outcome_from(OOM)))
    assert (note.confidence, note.decision) == (0.75, "retry_logged")


def test_patched_job_is_the_patch_applied_to_the_job() -> None:
    spec = job({"chunk_size": 10_000})
    note = diagnose(failure("execution", spec, outcome=outcome_from(OOM)))
    assert note.patch is not None
    assert apply_patch(spec, note.patch) == note.patched_job
    assert isinstance(note.patch, Patch) and note.patch.patch_id.startswith("patch-")


async def test_diagnose_failure_without_memory_answers_by_the_rule_table() -> None:
    req = failure("execution", job({"batch_size": 64}), outcome=outcome_from(OOM))
    reflection = Reflection(None, None)
    note = await ActivityEnvironment().run(reflection.diagnose_failure, req)
    assert note == diagnose(req) and note.decision == "retry"


def test_a_job_that_stops_itself_is_diagnosed_in_words_that_read_and_quote_its_last_line() -> None:
    stopped = "data.csv: column 'label' should hold text labels but has dtype str"
    note = diagnose(failure("execution", job({"column": "label"}),
                            outcome=outcome_from(f"reading data.csv\n{stopped}\n")))
    assert note.root_cause == "unknown" and note.patch is None
    assert note.reason.startswith("the job ended with no Python traceback (exited with status "
                                  "1; see stderr); a person has to look at its output")
    assert "see stderr without" not in note.reason
    assert f"stderr ends: {stopped}" in note.evidence
