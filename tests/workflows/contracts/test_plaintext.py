"""Text from outside is made plain where it enters: escape sequences and control characters
in a plan, a goal or a signal's free text never reach what the workflows write."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import cast

import pytest
from google.protobuf.json_format import MessageToDict
from temporalio.api.enums.v1 import EventType
from temporalio.testing import WorkflowEnvironment

from tests.workflows.common.test_gates import human, plan_gate_waiting
from tests.workflows.harness import Harness, task
from workflows.contracts.gates import GateDecision
from workflows.contracts.plaintext import plain_text
from workflows.contracts.plan import Plan
from workflows.research.workflow import ResearchWorkflow

TITLE = "\x1b]0;PWNED\x07"
"""An OSC sequence that retitles the terminal of whoever prints it."""
HOSTILE = f"fit {TITLE}the \x1b[31mline\x1b[0m\r\x08 \u202e now\x9b2J"


@pytest.mark.parametrize(("given", "plain"), [
    ("a\x1b[31mred\x1b[0m b", "ared b"),
    (f"x{TITLE}y", "xy"),
    ("x\x1b]8;;http://e.org\x1b\\link\x1b]8;;\x1b\\y", "xlinky"),  # a hidden hyperlink
    ("x\x1bPq#0;2;0;0;0\x1b\\y", "xy"),  # DCS (sixel)
    ("c\rd\x08e\x00f\x07", "cdef"),
    ("lines\n\tand tabs stay", "lines\n\tand tabs stay"),
    ("evil\u202egnp.exe", "evilgnp.exe"),
    ("p < 0.05 & q > 1, é 😀", "p < 0.05 & q > 1, é 😀"),
    ("\x9b2Jz\x9d0;t\x9c", "z"),
    ("cut at the end\x1b", "cut at the end"),
])
def test_escape_sequences_and_controls_go_whole(given: str, plain: str) -> None:
    assert plain_text(given) == plain


def test_an_action_of_escape_sequences_alone_is_empty_and_refused() -> None:
    with pytest.raises(ValueError, match="at least 1 character"):
        Plan.model_validate({"decisions": [{**task("a"), "action": "\x1b[2J\x07"}]})


def test_a_plan_and_a_decision_are_plain_once_read() -> None:
    plan = Plan.model_validate({"decisions": [{**task("a"), "action": HOSTILE,
                                               "acceptance_criteria": [f"ok{TITLE}"],
                                               "rationale": "\x1b[2J why"}]})
    (decision,) = plan.decisions
    assert decision.action == "fit the line  now"
    assert (decision.acceptance_criteria, decision.rationale) == (["ok"], " why")
    gate = GateDecision.model_validate({"gate": "plan", "decision": "approve",
                                        "by": f"ada{TITLE}", "comment": HOSTILE})
    assert (gate.by, gate.comment) == ("ada", "fit the line  now")


async def test_a_run_started_by_hand_writes_no_escape_anywhere(
        time_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    harness = Harness(time_env, task_queue, tmp_path)
    req = harness.request([task("a")], **human("plan")).model_dump(mode="json")
    req["plan"]["decisions"][0]["action"] = HOSTILE  # raw, past every client-side model
    async with harness.worker():
        handle = await time_env.client.start_workflow(
            "ResearchWorkflow", req, id=req["run_id"], task_queue=harness.queue)
        await plan_gate_waiting(handle)  # pyright: ignore[reportArgumentType]
        await handle.signal("approve", {"gate": "plan", "decision": "approve",
                                        "by": f"ada{TITLE}", "comment": HOSTILE})
        await handle.result()
        history = await handle.fetch_history()
    written = [MessageToDict(e) for e in history.events
               if e.event_type not in (EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
                                       EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)]
    text = json.dumps(written)
    # payloads are base64 in the history: decode each before looking
    decoded = "".join(_payload_texts(written))
    assert "fit the line" in decoded and "ada" in decoded
    for bad in ("\x1b", "\x07", "\x9b", "\u202e", "\\u001b", "\\u0007", "\\u009b",
                "\\u202e", "\\r"):
        assert bad not in decoded, repr(bad)
    assert "PWNED" not in decoded and "PWNED" not in text
    result = await time_env.client.get_workflow_handle_for(ResearchWorkflow.run,
                                                           req["run_id"]).result()
    assert result.gates[0].comment == "fit the line  now" and result.gates[0].by == "ada"


def _payload_texts(node: object) -> list[str]:
    """Every payload's data in a history dumped as JSON dicts, decoded from base64."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in cast(dict[str, object], node).items():
            if key == "data" and isinstance(value, str):
                found.append(base64.b64decode(value).decode("utf-8", "replace"))
            else:
                found += _payload_texts(value)
    elif isinstance(node, list):
        for item in cast(list[object], node):
            found += _payload_texts(item)
    return found


def test_a_report_written_before_is_shown_plain() -> None:
    """``assay report`` reads a results JSON that may predate this rule: it is made plain."""
    from activities.reports.markdown import render_markdown
    from workflows.contracts.results import RunReport

    task = {"task_id": "a", "status": "completed", "status_reason": "ok", "action": HOSTILE}
    raw = {"run_id": "r", "plan_name": "p", "plan_sha256": "0" * 64, "status": "completed",
           "timestamp": "20260101_000000", "started_at": "2026-01-01T00:00:00Z",
           "finished_at": "2026-01-01T00:01:00Z", "goal": f"why{TITLE}?", "tasks": [task]}
    shown = render_markdown(RunReport.model_validate_json(json.dumps(raw)))
    assert "fit the line" in shown and "why?" in shown
    assert not any(c in shown for c in "\x1b\x07\x9b\u202e\r")
