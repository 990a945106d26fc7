"""A job's own ``metrics.json`` can never fail the sandbox activity.

Every malformed file ends the first attempt in an outcome (``metrics_error`` says why) that
Temporal can carry, and verification then fails naming it; the job is not run again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.artifacts.store import LocalArtifactStore
from activities.evidence.verify import verify
from activities.sandbox.job import MAX_METRICS_BYTES, Sandbox
from activities.sandbox.jobjson import MAX_DEPTH, parse_json_object, read_json_object
from client.assay import DATA_CONVERTER
from workflows.contracts.execution import ExecuteJobInput, ExecutionOutcome, VerifyEvidenceInput
from workflows.contracts.plan import JobSpec, Resources

CASES = {  # what the job writes (a Python expression), what the refusal says
    "nested-100000": ("b'[' * 100_000 + b']' * 100_000", f"more than {MAX_DEPTH} levels deep"),
    "nested-500": ("b'{\"a\": ' + b'[' * 500 + b']' * 500 + b'}'", "levels deep"),
    "lone-surrogate": (r"""b'{"label": "\\ud800"}'""", "not valid Unicode"),
    "surrogate-key": (r"""b'{"\\udc00": 1}'""", "not valid Unicode"),
    "nan": ("""b'{"rmse": NaN}'""", "holds NaN"),
    "infinity": ("""b'{"rmse": Infinity}'""", "holds Infinity"),
    "overflow": ("""b'{"rmse": -1e999}'""", "too large for a float"),
    "fifty-megabytes": ("""b'{"pad": "' + b'x' * 50_000_000 + b'"}'""", "metrics are limited"),
}


@pytest.fixture
def sandbox(work_dir: Path) -> Sandbox:
    return Sandbox(work_dir=work_dir, heartbeat_every_s=0.2)


def job_writing(content: str) -> JobSpec:
    """A job that writes the bytes of the expression ``content`` to metrics.json."""
    code = f"open('metrics.json', 'wb').write({content})\n"
    return JobSpec(code=code, source=code, filename="job.py", expected_metrics=["rmse"],
                   resources=Resources(memory_mb=512, timeout_s=30))


@pytest.mark.parametrize("case", list(CASES))
async def test_bad_metrics_end_in_an_outcome_on_the_first_attempt(
        sandbox: Sandbox, case: str) -> None:
    content, reason = CASES[case]
    job = job_writing(content)
    req = ExecuteJobInput(run_id="run-1", task_id="t1", job=job)

    outcome = await ActivityEnvironment().run(sandbox.execute_job, req)  # no exception: no retry

    assert outcome.outcome == "succeeded", outcome.reason + outcome.stderr_tail
    assert outcome.metrics == {}
    assert outcome.metrics_error is not None and reason in outcome.metrics_error
    [payload] = DATA_CONVERTER.payload_converter.to_payloads([outcome])  # Temporal can carry it
    [back] = DATA_CONVERTER.payload_converter.from_payloads([payload], [ExecutionOutcome])
    assert back == outcome
    verdict = verify(VerifyEvidenceInput(task_id="t1", job=job, outcome=outcome),
                     LocalArtifactStore(Path(outcome.workspace).parents[2] / "store"))
    assert not verdict.passed
    assert f"metrics.json unusable: {outcome.metrics_error}" in verdict.missing


def test_flat_metrics_and_brackets_inside_strings_are_fine() -> None:
    raw = json.dumps({"rmse": 0.25, "note": "[" * 1000 + '\\"{', "n": 10**30,
                      "nested": json.loads("[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1))})
    value, error = parse_json_object(raw.encode(), "metrics.json")
    assert error is None and value["rmse"] == 0.25 and value["n"] == 10**30


def test_one_level_too_deep_is_refused() -> None:
    raw = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    assert parse_json_object(raw.encode(), "metrics.json") == (
        {}, f"metrics.json nests arrays or objects more than {MAX_DEPTH} levels deep; keep "
            "metrics flat (names to numbers or strings)")


@pytest.mark.parametrize(("raw", "reason"), [
    (b'{"a": "\xed\xa0\x80"}', "not UTF-8"),  # an encoded surrogate
    (b'\xff\xfe{\x00}\x00', "not UTF-8"),  # UTF-16, which json.loads(bytes) would accept
    (b'"' + b'\\"' * 100_000, "not valid JSON"),  # no string-skipping pattern backtracks
    (b"[1, 2]", "must hold a JSON object"),
])
def test_other_refusals_say_why(raw: bytes, reason: str) -> None:
    value, error = parse_json_object(raw, "metrics.json")
    assert value == {} and error is not None and reason in error


def test_a_link_named_metrics_json_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_text('{"a": 1}')
    (tmp_path / "metrics.json").symlink_to(tmp_path / "real.json")
    assert read_json_object(tmp_path / "metrics.json", MAX_METRICS_BYTES) == (
        {}, "metrics.json must be a regular file (not a link or directory)")


def test_no_metrics_file_is_no_error(tmp_path: Path) -> None:
    assert read_json_object(tmp_path / "metrics.json", MAX_METRICS_BYTES) == ({}, None)
