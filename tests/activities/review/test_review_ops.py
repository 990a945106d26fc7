"""The ops reviewer: every rule with a case that trips it and one that does not."""

from __future__ import annotations

from typing import Any

import pytest

from activities.review.ops import review_ops_spec
from workflows.contracts.plan import Check, JobSpec, Resources, Scalar
from workflows.contracts.policy import ReviewPolicy
from workflows.contracts.verdicts import Finding, ReviewInput, ReviewVerdict

CLEAN = 'import json\nopen("metrics.json", "w").write(json.dumps({"m": 1}))\n'


def review(code: str | None = CLEAN, *, args: dict[str, Scalar] | None = None,
           checks: list[Check] | None = None, criteria: list[str] | None = None,
           policy: ReviewPolicy | None = None, **job: Any) -> ReviewVerdict:
    job.setdefault("expected_metrics", ["m"])
    spec = JobSpec(code=code or "pass", args=args or {}, **job)
    spec = spec.model_copy(update={"source": code, "filename": job.get("filename", "job.py")})
    req = ReviewInput(task_id="t1", action="analyse", acceptance_criteria=criteria or [],
                      checks=checks or [], job=spec, policy=policy or ReviewPolicy())
    return review_ops_spec(req)


def codes(verdict: ReviewVerdict) -> dict[str, Finding]:
    return {f.code: f for f in [*verdict.critical, *verdict.warnings]}


def test_a_clean_spec_approves_with_every_check_true() -> None:
    verdict = review()
    assert verdict.reviewer == "ops"
    assert verdict.verdict == "APPROVE"
    assert not verdict.critical and not verdict.warnings
    assert verdict.confidence == 0.95
    assert all(verdict.checks.values()) and "metrics_declared" in verdict.checks


def test_same_input_gives_the_same_verdict() -> None:
    assert review(args={"x": 1}).model_dump() == review(args={"x": 1}).model_dump()


def test_syntax_error_is_critical_with_its_line() -> None:
    verdict = review("import json\n\ndef broken(:\n    pass\n")
    found = codes(verdict)["syntax_error"]
    assert verdict.verdict == "REJECT" and found.severity == "critical"
    assert found.line == 3 and "does not parse" in found.message
    assert verdict.checks["spec_complete"] is False


def test_missing_source_is_critical() -> None:
    verdict = review(None)
    assert "missing_source" in codes(verdict) and verdict.verdict == "REJECT"


@pytest.mark.parametrize("name", ["../job.py", "jobs/job.py", "job.sh", ".hidden.py", ""])
def test_filename_must_be_a_plain_python_name(name: str) -> None:
    verdict = review(filename=name)
    assert codes(verdict)["bad_filename"].severity == "critical"


def test_plain_filename_passes() -> None:
    assert "bad_filename" not in codes(review(filename="profile_data.py"))


ARGPARSE = """import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--batch_size", type=int, default=8)
parser.add_argument("--rate", type=float, default=0.1)
parser.add_argument("--verbose", action="store_true")
parser.add_argument("--mode", choices=["fast", "slow"], default="fast")
parser.add_argument("--flag", type=bool, default=False)
parser.add_argument("--permutations", type=int, default=10)
parser.add_argument("--name", required=True)
args = parser.parse_args()
open("metrics.json", "w").write("{}")
"""


@pytest.mark.parametrize(("args", "code", "line"), [
    ({"name": "a", "batch_size": "big"}, "arg_type_mismatch", 3),
    ({"name": "a", "batch_size": 32.0}, "arg_type_mismatch", 3),
    ({"name": "a", "rate": "fast"}, "arg_type_mismatch", 4),
    ({"name": "a", "verbose": True}, "flag_takes_no_value", 5),
    ({"name": "a", "mode": "medium"}, "arg_not_in_choices", 6),
    ({"batch_size": 4}, "missing_required_argument", 9),
    ({"name": "a", "epochs": 3}, "unknown_argument", None),
])
def test_args_that_argparse_would_refuse_are_critical(
        args: dict[str, Scalar], code: str, line: int | None) -> None:
    verdict = review(ARGPARSE, args=args)
    found = codes(verdict)[code]
    assert found.severity == "critical" and found.line == line
    assert verdict.verdict == "REJECT" and verdict.checks["args_valid"] is False


def test_args_that_convert_pass() -> None:
    verdict = review(ARGPARSE, args={"name": "a", "batch_size": 32, "rate": 1, "mode": "slow"})
    assert verdict.verdict == "APPROVE" and not verdict.warnings


def test_type_bool_and_abbreviations_are_warnings() -> None:
    found = codes(review(ARGPARSE, args={"name": "a", "flag": False, "perm": 5}))
    assert found["bool_type_argument"].severity == "warning"
    assert found["bool_type_argument"].line == 7
    assert "--permutations" in found["abbreviated_argument"].message


def test_unknown_flag_with_parse_known_args_is_only_a_warning() -> None:
    code = ARGPARSE.replace("parse_args()", "parse_known_args()[0]")
    found = codes(review(code, args={"name": "a", "epochs": 3}))
    assert found["ignored_argument"].severity == "warning" and "unknown_argument" not in found


def test_unknown_flag_is_not_judged_when_options_are_declared_in_a_loop() -> None:
    code = ("import argparse\np = argparse.ArgumentParser()\nfor n in ('a', 'b'):\n"
            "    p.add_argument('--' + n)\nargs = p.parse_args()\nopen('metrics.json', 'w')\n")
    assert review(code, args={"a": 1}).verdict == "APPROVE"


def test_positional_argument_cannot_be_supplied() -> None:
    code = ("import argparse\np = argparse.ArgumentParser()\np.add_argument('data')\n"
            "p.parse_args()\n")
    found = codes(review(code, args={"data": "x.csv"}))["positional_argument"]
    assert found.severity == "critical" and found.line == 3


def test_args_are_not_judged_without_argparse() -> None:
    assert review(CLEAN, args={"anything": "goes"}).verdict == "APPROVE"


def test_check_on_undeclared_metric_is_critical() -> None:
    verdict = review(checks=[Check(metric="p_value", op="<", value=0.05)])
    found = codes(verdict)["undeclared_metric"]
    assert found.severity == "critical"
    assert "check on undeclared metric 'p_value'" in found.message
    assert "add it to expected_metrics" in found.message


def test_a_check_on_a_number_of_a_declared_metric_passes() -> None:
    verdict = review(checks=[Check(metric="m.ci_low", op=">=", value=0.01)])
    assert verdict.verdict == "APPROVE" and verdict.checks["metrics_declared"]
    refused = review(checks=[Check(metric="r2.ci_low", op=">=", value=0.01)])
    assert "check on undeclared metric 'r2.ci_low'" in codes(refused)["undeclared_metric"].message


def test_check_on_declared_metric_passes() -> None:
    verdict = review(checks=[Check(metric="m", op=">", value=0)])
    assert verdict.verdict == "APPROVE" and verdict.checks["metrics_declared"]


@pytest.mark.parametrize("criterion", ["Output artifact: profile.json",
                                       "The summary is written to report.md.",
                                       "artifact: figures/plot.png with both groups",
                                       "a table summary.csv of every group"])
def test_criterion_naming_an_undeclared_file_warns(criterion: str) -> None:
    verdict = review(criteria=[criterion])
    assert codes(verdict)["artifact_not_expected"].severity == "warning"
    assert verdict.verdict == "APPROVE" and verdict.checks["artifacts_declared"] is False


def test_criterion_naming_a_declared_input_or_metrics_file_passes() -> None:
    code = CLEAN + 'open("profile.json", "w")\nopen("figures/plot.png", "wb")\n'
    spec = JobSpec(code=code, expected_metrics=["m"],
                   expected_artifacts=["profile.json", "figures/plot.png"])
    req = ReviewInput(task_id="t", action="a", job=spec.model_copy(
        update={"source": code, "filename": "job.py"}), input_names=["iris.csv"],
        acceptance_criteria=["Output artifact: profile.json", "plot.png is drawn",
                             "reads iris.csv", "writes metrics.json", "r2 > 0.9"])
    assert review_ops_spec(req).warnings == []


def test_a_job_with_nothing_to_verify_is_critical() -> None:
    verdict = review(expected_metrics=[])
    assert codes(verdict)["nothing_to_verify"].severity == "critical"


@pytest.mark.parametrize(("resources", "code"), [
    (Resources(timeout_s=3601), "timeout_s_over_policy"),
    (Resources(memory_mb=4097), "memory_mb_over_policy"),
    (Resources(cpus=2.5), "cpus_over_policy"),
])
def test_resources_over_policy_are_critical(resources: Resources, code: str) -> None:
    policy = ReviewPolicy(max_timeout_s=3600, max_memory_mb=4096, max_cpus=2)
    verdict = review(resources=resources, policy=policy)
    assert codes(verdict)[code].severity == "critical"
    assert verdict.checks["resources_within_policy"] is False


def test_resources_at_the_limit_pass() -> None:
    policy = ReviewPolicy(max_timeout_s=3600, max_memory_mb=4096, max_cpus=2)
    verdict = review(resources=Resources(timeout_s=3600, memory_mb=4096, cpus=2), policy=policy)
    assert verdict.verdict == "APPROVE"


def test_outputs_never_named_in_the_source_warn() -> None:
    found = codes(review("x = 1\n", expected_artifacts=["table.csv"]))
    assert found["metrics_not_written"].severity == "warning"
    assert "table.csv" in found["artifact_not_written"].message


def test_artifact_named_through_args_counts_as_written() -> None:
    verdict = review(args={"out": "table.csv"}, expected_artifacts=["table.csv"])
    assert "artifact_not_written" not in codes(verdict)


def test_dependency_artifact_no_dependency_produced_warns() -> None:
    spec = JobSpec(code=CLEAN, args={"regression": "deps/3/regression.json"},
                   expected_metrics=["m"])
    req = ReviewInput(task_id="t", action="a", dependency_artifacts=["deps/2/comparison.json"],
                      job=spec.model_copy(update={"source": CLEAN, "filename": "job.py"}))
    found = codes(review_ops_spec(req))
    assert "deps/3/regression.json" in found["dependency_artifact_unknown"].message
    ok = req.model_copy(update={"dependency_artifacts": ["deps/3/regression.json"]})
    assert review_ops_spec(ok).verdict == "APPROVE" and not review_ops_spec(ok).warnings
