"""The reflector role: its answer read, guarded and scored like the rule table's patches.

A failure the rule table calls ``unknown`` (an exception no rule names) goes to the reflector;
its changes of arguments and resources become a note with the reflection formulas' confidence
and risk, and a change the guardrails refuse (more memory, a field outside args/resources,
a path) is kept as refused, never as a patch. The role itself runs on the real SDK against
the scripted Messages API server.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from activities.agents.reflector import reflect_message, reflector_note
from activities.agents.roles import Agents
from activities.patches.apply import apply_patch
from activities.reflection.reflection import diagnose
from tests.support.fake_anthropic import FakeAnthropic, ToolUse, tool_of
from workflows.contracts.execution import ExecutionOutcome
from workflows.contracts.plan import JobSpec, Resources
from workflows.contracts.reflection import DiagnoseInput
from workflows.contracts.reflector import ReflectorOutput, ReflectRequest

RUN_ID = "assay-run-solver-0a1b2c3d4e"
WORKSPACE = f"/srv/assay/work/{RUN_ID}/solve/attempt-1"
STDERR = (f'Traceback (most recent call last):\n  File "{WORKSPACE}/job.py", line 9, in <module>\n'
          "RuntimeError: no convergence at tolerance 1e-12 after 50 iterations\n")


def failure() -> DiagnoseInput:
    job = JobSpec(code="print('solve')\n", source="print('solve')\n", filename="job.py",
                  args={"tolerance": 1e-12, "iterations": 50}, expected_metrics=["root"],
                  resources=Resources(memory_mb=256, timeout_s=60))
    outcome = ExecutionOutcome(outcome="nonzero_exit", reason="exited with status 1",
                               exit_code=1, stderr_tail=STDERR, workspace=WORKSPACE)
    return DiagnoseInput(run_id=RUN_ID, task_id="solve", kind="execution", attempt=1, job=job,
                         outcome=outcome, action="Find the root of the polynomial")


def request() -> ReflectRequest:
    failed = failure()
    return ReflectRequest(run_id=RUN_ID, task_id="solve", failure=failed, note=diagnose(failed))


def answer(*changes: dict[str, Any], root_cause: str = "invalid_value") -> ReflectorOutput:
    return ReflectorOutput.model_validate({
        "root_cause": root_cause, "likely_fix": "loosen the tolerance",
        "reason": "1e-12 is below what double precision reaches in 50 iterations",
        "changes": list(changes)})


def test_the_rule_table_cannot_name_the_failure() -> None:
    note = diagnose(failure())
    assert (note.root_cause, note.patch) == ("unknown", None)


def test_a_known_root_cause_with_one_argument_change_is_patched_and_retried() -> None:
    req = request()
    note = reflector_note(req, answer({"field": "args.tolerance", "value": 1e-6}))
    assert note.patch is not None and note.patched_job is not None
    assert note.source == "model" and note.root_cause == "invalid_value"
    # 0.50 + 0.25 known pattern + 0.15 minimal patch; risk 0.05 x 1 + 0.30 x (1 - 0.90)
    assert (note.confidence, note.decision) == (0.9, "retry")
    assert note.patch.risk == pytest.approx(0.08)
    assert note.patched_job.args == {"tolerance": 1e-6, "iterations": 50}
    change = note.patch.changes[0]
    assert (change.field, change.old_value, change.new_value) == ("args.tolerance", 1e-12, 1e-6)
    assert apply_patch(req.failure.job, note.patch) == note.patched_job  # sealed, appliable
    assert note.note_id != req.note.note_id and note.patch.sha256


def test_a_root_cause_of_its_own_scores_lower_and_asks_a_person() -> None:
    note = reflector_note(request(), answer({"field": "args.tolerance", "value": 1e-6},
                                            root_cause="solver_precision"))
    assert (note.confidence, note.decision) == (0.65, "human")


@pytest.mark.parametrize(("change", "refusal"), [
    ({"field": "resources.memory_mb", "value": 65536}, "raises resources.memory_mb"),
    ({"field": "code", "value": "print('root')"}, "touches code"),
    ({"field": "expected_metrics", "value": "root"}, "touches expected_metrics"),
    ({"field": "args.tolerance", "value": "../../etc/passwd"}, "changes type"),
    ({"field": "resources.timeout_s", "value": 30_000}, "beyond the policy's ceiling"),
    ({"field": "args.api_key", "value": "abc"}, "looks like a credential"),
], ids=["more-memory", "code", "evidence", "path", "timeout-ceiling", "credential"])
def test_a_hostile_patch_is_refused_and_recorded_never_applied(change: dict[str, Any],
                                                               refusal: str) -> None:
    note = reflector_note(request(), answer(change))
    assert note.patch is None and note.patched_job is None
    assert note.decision == "defer" and note.source == "none"
    refused = [e for e in note.evidence if e.startswith("guardrail: ")]
    assert any(refusal in e for e in refused), note.evidence
    assert "patch" in note.reason and refusal in note.reason


def test_no_changes_means_no_patch() -> None:
    note = reflector_note(request(), answer())
    assert note.patch is None and note.decision == "defer"


def test_an_answer_that_is_not_a_diagnosis_is_refused_by_its_contract() -> None:
    with pytest.raises(ValidationError, match="root_cause"):
        answer(root_cause="Not A Name!")
    with pytest.raises(ValidationError, match="changes"):
        answer(*[{"field": f"args.a{n}", "value": n} for n in range(6)])


def test_its_message_shows_the_failure_without_run_ids_or_paths() -> None:
    text = reflect_message(request())
    assert "RuntimeError: no convergence at tolerance 1e-12" in text
    assert '"tolerance": 1e-12' in text and "resources.timeout_s: at most 21600" in text
    assert "root cause: unknown" in text and "invalid_value" in text
    assert RUN_ID not in text and "/srv/assay" not in text


async def test_the_role_answers_through_the_model_gateway(agents: Agents,
                                                          fake: FakeAnthropic) -> None:
    fake.script(ToolUse(answer({"field": "args.tolerance", "value": 1e-6}).model_dump()))
    got = await agents.reflect_failure(request())
    assert tool_of(fake.requests[0].body) == "ReflectorOutput"
    assert got.note.patch is not None and got.note.decision == "retry"
    assert got.spend.role == "reflector" and got.spend.calls == 1


def test_it_reads_the_rule_tables_diagnosis_not_the_deferral_that_no_longer_holds() -> None:
    """The rule table alone would end the task deferred; the reflector, and the debuggers
    after it, come first, so the reflector is not told that the task ends."""
    stopped = f"{WORKSPACE}/data.csv: column 'label' should hold text but has dtype str"
    failed = failure().model_copy(update={"outcome": ExecutionOutcome(
        outcome="nonzero_exit", reason="exited with status 1; see stderr", exit_code=1,
        stderr_tail=f"{stopped}\n", workspace=WORKSPACE)})
    note = diagnose(failed)
    assert note.reason.endswith("the task ends deferred)")
    text = reflect_message(ReflectRequest(run_id=RUN_ID, task_id="solve", failure=failed,
                                          note=note))
    told = text[text.index("## The rule table's note"):text.index("## Patches already")]
    assert "deferred" not in told and "(confidence" not in told
    assert ("- reason: the job ended with no Python traceback (exited with status 1; see "
            "stderr); a person has to look at its output\n") in told
    assert "- its confidence: 0.20, with no patch of its own" in told
    assert "- stderr ends: ./data.csv: column 'label' should hold text" in told
