"""The ops reviewer: is the job spec complete, consistent and within policy?

A pure function of the review input. It reads the job's source only as far as it declares
things (its syntax and its argparse options); what the code *does* is the quality and safety
reviewer's concern, and whether the machine can run it the infrastructure reviewer's.
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

from activities.review.args import (
    NO_VALUE_ACTIONS,
    ArgparseSpec,
    Option,
    argparse_spec,
    convert,
    flag_text,
)
from activities.review.common import MAX_SOURCE_BYTES, Findings, ParseFailure, parse_job, verdict
from workflows.contracts.estimates import split_name
from workflows.contracts.verdicts import ReviewInput, ReviewVerdict

OPS_CHECKS = ("spec_complete", "args_valid", "metrics_declared", "artifacts_declared",
              "outputs_written", "dependencies_available", "verifiable",
              "resources_within_policy")

_FILENAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\.py$")
_OUTPUT_EXTENSIONS = ("json", "jsonl", "csv", "tsv", "md", "txt", "html", "pdf", "png", "jpg",
                      "jpeg", "svg", "gif", "parquet", "feather", "npy", "npz", "pkl", "pickle",
                      "yaml", "yml", "xlsx", "h5", "hdf5", "pt", "log", "zip", "tar", "gz")
_FILE_TOKEN = re.compile(
    r"[\w./-]*\w\.(?:" + "|".join(_OUTPUT_EXTENSIONS) + r")(?!\w|\.\w)", re.IGNORECASE)


def review_ops_spec(req: ReviewInput) -> ReviewVerdict:
    """Review a job spec: source and name, args, metrics, artifacts, and resources."""
    findings = Findings()
    findings.start(*OPS_CHECKS)
    tree = _source(req, findings)
    if tree is not None:
        _args(req, argparse_spec(tree), findings)
        _outputs_written(req, tree, findings)
    _metrics(req, findings)
    _artifacts(req, findings)
    _dependencies(req, findings)
    _resources(req, findings)
    return verdict("ops", findings, "the job spec",
                   details={"source_analysed": tree is not None})


def _source(req: ReviewInput, findings: Findings) -> ast.Module | None:
    job = req.job
    name = job.filename or "job.py"
    if job.filename is None or not _FILENAME.match(job.filename):
        findings.fail("spec_complete", "bad_filename",
                      f"job filename {job.filename!r} is not a plain *.py file name; the job "
                      "file must be named like analysis.py, with no folder")
    if not job.source or not job.source.strip():
        findings.fail("spec_complete", "missing_source",
                      "the job has no source code; give it an `entry` script or inline `code`")
        return None
    if len(job.source.encode()) > MAX_SOURCE_BYTES:
        return None  # the quality and safety reviewer refuses it; nothing more to read here
    parsed = parse_job(job.source, name)
    if isinstance(parsed, ParseFailure):
        findings.fail("spec_complete", "syntax_error", parsed.message, parsed.line)
        return None
    return parsed


def _args(req: ReviewInput, spec: ArgparseSpec | None, findings: Findings) -> None:
    for key, value in req.job.args.items():
        if not isinstance(value, str | int | float | bool):  # pyright: ignore[reportUnnecessaryIsInstance]
            findings.fail("args_valid", "arg_not_scalar",
                          f"arg {key!r} is {type(value).__name__}; args must be text, numbers "
                          "or booleans")
            continue
        if spec is not None:
            _arg_against(spec, key, flag_text(value), findings)
    if spec is None:
        return
    for option in spec.options:
        _required(option, req, findings)


def _arg_against(spec: ArgparseSpec, key: str, text: str, findings: Findings) -> None:
    flag = f"--{key}"
    option = spec.find(flag)
    if option is None:
        _unknown_flag(spec, flag, findings)
        return
    if option.action in NO_VALUE_ACTIONS:
        # Certain failure: argparse exits with "ignored explicit argument" before any work.
        findings.fail("args_valid", "flag_takes_no_value",
                      f"{flag} is declared with action={option.action!r}, which takes no "
                      f"value, but jobs receive {flag}={text}; argparse will refuse it. Declare "
                      "it with a type (e.g. type=int) or drop it from args", option.line)
        return
    if option.type_name == "bool":
        findings.warn("args_valid", "bool_type_argument",
                      f"{flag} is declared with type=bool, which reads any non-empty text, "
                      f"including 'false', as True", option.line)
    value, error = convert(option, text)
    if error is not None:
        # Critical, not a warning: argparse exits with status 2 before the job does anything,
        # so running it can only fail.
        findings.fail("args_valid", "arg_type_mismatch",
                      f"{flag}={text}: {error} (declared type={option.type_name}); argparse "
                      "will exit before the job runs. Fix the value in args", option.line)
    elif option.choices is not None and value not in option.choices:
        findings.fail("args_valid", "arg_not_in_choices",
                      f"{flag}={text} is not one of the declared choices "
                      f"{option.choices!r}", option.line)


def _unknown_flag(spec: ArgparseSpec, flag: str, findings: Findings) -> None:
    declared = spec.long_flags()
    if not spec.complete:
        return  # options declared in ways we cannot read may well include this one
    prefixed = [f for f in declared if f.startswith(flag)]
    if len(prefixed) == 1:
        findings.warn("args_valid", "abbreviated_argument",
                      f"{flag} only matches {prefixed[0]} as an abbreviation; use the full name")
    elif spec.strict:
        findings.fail("args_valid", "unknown_argument",
                      f"{flag} is not declared by the job's argparse parser (declared: "
                      f"{', '.join(declared) or 'none'}); parse_args will exit with "
                      "'unrecognized arguments'. Rename the arg or declare the option")
    else:
        findings.warn("args_valid", "ignored_argument",
                      f"{flag} is not declared by the job's parser; parse_known_args will "
                      "ignore it")


def _required(option: Option, req: ReviewInput, findings: Findings) -> None:
    if option.positional and not option.optional_positional:
        findings.fail("args_valid", "positional_argument",
                      f"the job declares the positional argument {option.flags[0]!r}, but jobs "
                      "receive only --key=value flags; declare it as --"
                      f"{option.flags[0]} instead", option.line)
    elif option.required and not any(f"--{key}" in option.flags for key in req.job.args):
        findings.fail("args_valid", "missing_required_argument",
                      f"{'/'.join(option.flags)} is declared required=True but is not in the "
                      "job's args; add it to args", option.line)


def _metrics(req: ReviewInput, findings: Findings) -> None:
    """Every check names a declared metric (or one number of it: ``r2.ci_low`` of ``r2``)."""
    declared = dict.fromkeys(req.job.expected_metrics)
    for check in req.checks:
        if split_name(check.metric, declared)[0] not in declared:
            findings.fail("metrics_declared", "undeclared_metric",
                          f"check on undeclared metric {check.metric!r} "
                          f"({check.describe()}) — add it to expected_metrics")


def _basename(path: str) -> str:
    return PurePosixPath(path).name


def _artifacts(req: ReviewInput, findings: Findings) -> None:
    job = req.job
    declared = set(job.expected_artifacts) | {_basename(a) for a in job.expected_artifacts}
    known = set(req.input_names) | {_basename(d) for d in req.dependency_artifacts}
    if job.expected_metrics:
        known.add("metrics.json")
    for criterion in req.acceptance_criteria:
        for token in _FILE_TOKEN.findall(criterion):
            if token.startswith("/") or token in declared or _basename(token) in declared:
                continue
            if token in known or _basename(token) in known:
                continue
            findings.warn("artifacts_declared", "artifact_not_expected",
                          f"acceptance criterion {criterion!r} names {token}, which is not in "
                          "expected_artifacts; add it so its existence is verified")
    if not (job.expected_artifacts or job.expected_metrics or req.checks or req.diagnostic):
        findings.fail("verifiable", "nothing_to_verify",
                      "the job declares no expected_artifacts, no expected_metrics and no "
                      "checks, so nothing could verify its result; declare at least one")


def _string_constants(tree: ast.Module) -> list[str]:
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _outputs_written(req: ReviewInput, tree: ast.Module, findings: Findings) -> None:
    """Warn when an expected output's name appears nowhere the job could take it from."""
    texts = _string_constants(tree) + [str(v) for v in req.job.args.values()]
    if req.job.expected_metrics and not any("metrics.json" in t for t in texts):
        findings.warn("outputs_written", "metrics_not_written",
                      "expected_metrics are declared but the source never names metrics.json; "
                      "the job must write its metrics there")
    for name in req.job.expected_artifacts:
        if not any(_basename(name) in t for t in texts):
            findings.warn("outputs_written", "artifact_not_written",
                          f"expected artifact {name!r} is named neither in the source nor in "
                          "args; check that the job writes it")


def _dependencies(req: ReviewInput, findings: Findings) -> None:
    """Args naming ``deps/<task>/<file>`` must match an artifact a dependency left."""
    if not req.dependency_artifacts:
        return  # not known yet; the sandbox refuses missing dependency files anyway
    available = set(req.dependency_artifacts)
    for key, value in req.job.args.items():
        if isinstance(value, str) and value.startswith("deps/") and value not in available:
            findings.warn("dependencies_available", "dependency_artifact_unknown",
                          f"arg {key!r} names {value}, which no dependency produced "
                          f"(available: {', '.join(sorted(available))})")


def _resources(req: ReviewInput, findings: Findings) -> None:
    res, policy = req.job.resources, req.policy
    limits = (("timeout_s", res.timeout_s, policy.max_timeout_s),
              ("memory_mb", res.memory_mb, policy.max_memory_mb),
              ("cpus", res.cpus, policy.max_cpus))
    for name, asked, allowed in limits:
        if asked > allowed:
            findings.fail("resources_within_policy", f"{name}_over_policy",
                          f"resources.{name} = {asked:g} is over the policy limit of "
                          f"{allowed:g}; lower it or raise the limit for this run")
