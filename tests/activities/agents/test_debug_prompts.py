"""What the model reviewers of a debugger's fix and the diagnostic debugger's second stage read."""

from __future__ import annotations

from typing import Any

from activities.agents.render import DIAGNOSTIC_CHARS, debug_message, review_message
from tests.activities.agents.test_agents import (
    RUN_ID,
    WORKSPACE,
    debug_request,
    outcome,
    review_request,
)
from workflows.contracts.roles import DebugFix

FIRST_REVIEW = """\
## Task

Welch test

## Acceptance criteria

- p_value reported

## Checks on metrics.json

(none)

## Input files in the working directory

- iris.csv

## Artifacts of finished dependencies (read-only)

(none)

## Policy limits

memory_mb <= 8192, timeout_s <= 21600, cpus <= 8

## The job

- filename: job.py
- args: {"data": "iris.csv"}
- expected_artifacts: ["comparison.json"]
- expected_metrics: ["p_value"]
- resources: memory_mb=256, timeout_s=300, cpus=1
- requirements: ["pandas>=2"]

```python
import json
import pandas as pd

frame = pd.read_csv('iris.csv')
json.dump({'p_value': 0.01}, open('metrics.json', 'w'))
```

## Deterministic ops review

Verdict: APPROVE (confidence 0.90)

Checks: spec_complete=pass

Critical findings:
(none)

Warnings:
- [ops.memory] (line 4) 256 MB is tight
"""
"""A first job's review, byte for byte as it rendered before a fix could be named."""


def fix(*strategies: str, diagnosis: str = "the column is `Species`", **failed: Any,
        ) -> DebugFix:
    return DebugFix.model_validate({"strategies": list(strategies), "diagnosis": diagnosis,
                                    "failure": outcome(**failed)})


def test_a_first_job_s_review_renders_as_it_always_did() -> None:
    assert review_message(review_request()) == FIRST_REVIEW


def test_a_fix_s_reviewer_is_told_who_wrote_it_what_failed_and_to_check_the_cause() -> None:
    text = review_message(review_request(
        "infrastructure", fix=fix("introspect", diagnosis=f"{WORKSPACE}/job.py reads `species`")))
    note = text[text.index("## This job is a debugger's fix"):text.index("## The job\n")]
    assert "the *introspect* (also shown the environment's packages) debugger rewrote" in note
    assert "Check that the fix addresses the cause of that failure, not only its symptom" in note
    assert "- reason: exited with status 1: KeyError: 'species'" in note
    assert "- the debugger's diagnosis: ./job.py reads `species`" in note
    assert "stderr of the failed job (tail):\n```\nTraceback" in note
    assert "KeyError: 'species'\n```" in note
    assert WORKSPACE not in text and RUN_ID not in text
    assert text.replace(note, "") == review_message(review_request("infrastructure"))


def test_a_fix_several_debuggers_wrote_names_them_all_and_its_stderr_is_bounded() -> None:
    long = "warning: noisy\n" * 1000 + "ValueError: dtype str\n"
    text = review_message(review_request(fix=fix("direct", "diagnostic", stderr_tail=long)))
    assert ("the *direct* (from the error and the code) and *diagnostic* (after running a "
            "script that printed the facts it needed) debuggers each rewrote it into the job "
            "below (the same code)") in text
    assert "earlier characters cut ...]" in text and text.count("warning: noisy") < 300
    assert "ValueError: dtype str" in text


def test_the_diagnostic_second_stage_sees_its_own_script_and_what_it_said_it_would_tell(
        ) -> None:
    script = "import pandas as pd\nprint(pd.read_csv('iris.csv').dtypes)\n"
    text = debug_message(debug_request(
        "diagnostic", diagnostic_output="species    str\n", diagnostic_script=script,
        diagnostic_purpose="each column's dtype"))
    mine = text[text.index("## Your diagnostic script"):text.index("## Diagnostic output")]
    assert "What you said it would tell you: each column's dtype" in mine
    assert f"```python\n{script}```" in mine
    assert text.index("## Stage") < text.index("## Your diagnostic script")


def test_a_long_diagnostic_script_is_cut_and_says_so() -> None:
    script = "print(1)\n" * 1000
    text = debug_message(debug_request("diagnostic", diagnostic_output="1\n",
                                       diagnostic_script=script))
    assert f"[... {len(script) - DIAGNOSTIC_CHARS} more characters cut ...]" in text


def test_the_first_stage_shows_no_script_section() -> None:
    assert "## Your diagnostic script" not in debug_message(debug_request("diagnostic"))
