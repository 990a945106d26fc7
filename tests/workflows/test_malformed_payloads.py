"""Property: no payload sent to a signal or update wedges a run, its tasks or the skill library.

Random JSON of random shapes and depths, 1 MB strings, wrong types, unknown gates and tasks,
huge lists and bytes that are not JSON at all go to every signal and update of
``ResearchWorkflow``, ``TaskWorkflow`` and ``SkillLibraryWorkflow``. Every update is refused
with a non-retryable error, every query still answers small, and once the gates are approved
properly the run completes with no failed workflow task and with what the workflows themselves
wrote to their histories (every event but the signals' own payloads) under a bound.

It runs on the dev server, which enforces Temporal's 2 MB payload limit as a deployment does
(the time-skipping server enforces none, so a wedge would pass unseen there). The generator
is seeded (``ASSAY_FUZZ_SEED`` picks another seed); a failure names its seed.
"""

from __future__ import annotations

import json
import os
import random
import string
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import WorkflowHandle, WorkflowHistory, WorkflowUpdateFailedError
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from tests.support.waiting import wait_for
from tests.workflows.common.test_gates import plan_gate_waiting, start, task_gate_waiting
from tests.workflows.harness import Harness, task
from workflows.catalogue import EXTRACT_SKILLS, MAINTAIN_SKILLS, RECORD_OUTCOMES
from workflows.contracts.errors import ErrorType
from workflows.contracts.gates import DECISION_MAX_BYTES, GateDecision, GateRecord
from workflows.contracts.results import RunProgress, TaskProgress
from workflows.contracts.skills import (
    TASK_FINISHED,
    ExtractAnswer,
    ExtractInput,
    LibraryState,
    MaintainAnswer,
    MaintainInput,
    RecordAnswer,
    TaskOutcome,
    library_id,
)
from workflows.library.formulas import EXTRACT_EVERY
from workflows.library.workflow import SkillLibraryWorkflow

MB = 1_000_000
SENT_BOUND = 1_900_000
"""The largest payload sent: Temporal's servers refuse more than 2 MB."""
ROUNDS = 16
"""Payloads per handler and phase."""
SEEDS = [int(os.environ["ASSAY_FUZZ_SEED"])] if "ASSAY_FUZZ_SEED" in os.environ else [13, 1913]
EVENT_BOUND = DECISION_MAX_BYTES + 8_000
"""The largest event a workflow may write: an accepted decision, with its envelope."""
OWN_HISTORY_BOUND = 400_000
"""What one workflow may write in all, however many payloads it refused."""
ANSWER_BOUND = 64_000
"""The largest query answer."""
REFUSED = {ErrorType.GATE_REFUSED.value, ErrorType.PLAN_REFUSED.value}
ALPHABET = string.ascii_letters + string.digits + " \x00\n\"\\é😀"


class Junk:
    """Random payloads: mutated valid ones, random JSON, giants and bytes that are not JSON."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def text(self) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.15:  # 1 MB as JSON: "\x00" is written "\u0000"
            return rng.choice(["x" * MB, "é" * (MB // 2), "😀" * (MB // 4), "\x00" * (MB // 6)])
        if roll < 0.25:
            return rng.choice(["plan", "step", "error", "result", "launch", "PLAN", "",
                               "approve", "reject", "a", "zzz", "a" * 65, "../a"])
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40)))

    def value(self, depth: int = 0) -> Any:
        rng = self.rng
        kinds = ["text", "int", "float", "bool", "null"] + (["list", "dict"] if depth < 4 else [])
        kind = rng.choice(kinds)
        if kind == "list":
            return [self.value(depth + 1) for _ in range(rng.randint(0, 4))]
        if kind == "dict":
            return {self.text()[:30]: self.value(depth + 1) for _ in range(rng.randint(0, 4))}
        return {"text": self.text, "int": lambda: rng.choice([0, -1, 10**30, 7]),
                "float": lambda: rng.choice([0.5, -1e308, 1e-9]),
                "bool": lambda: rng.random() < 0.5, "null": lambda: None}[kind]()

    def giant(self) -> Any:
        """A huge list, deep nesting, or bytes no JSON reader takes."""
        rng = self.rng
        choice = rng.randrange(5)
        if choice == 0:
            return [rng.randint(0, 9) for _ in range(150_000)]
        if choice == 1:
            nested: Any = "x"
            for _ in range(rng.randint(50, 180)):
                nested = [nested] if rng.random() < 0.5 else {"k": nested}
            return nested
        data = [b"[" * 5000 + b"]" * 5000, b"{not json", b""][choice - 2]
        return RawValue(Payload(metadata={"encoding": b"json/plain"}, data=data))

    def mutate(self, template: dict[str, Any]) -> Any:
        """``template`` with fields replaced, dropped or added; or something else entirely.

        Payloads stay under the 2 MB a Temporal server takes (a larger one never reaches a
        workflow: the server refuses it).
        """
        while True:
            payload = self._mutate(template)
            if isinstance(payload, RawValue) or len(json.dumps(payload).encode()) < SENT_BOUND:
                return payload

    def _mutate(self, template: dict[str, Any]) -> Any:
        rng = self.rng
        roll = rng.random()
        if roll < 0.2:
            return self.value()
        if roll < 0.35:
            return self.giant()
        payload = dict(template)
        for _ in range(rng.randint(1, 3)):
            key = rng.choice([*template, "task_id", "comment", "extra", "job", "plan"])
            if rng.random() < 0.2:
                payload.pop(key, None)
            else:
                payload[key] = self.text() if rng.random() < 0.5 else self.value()
        if payload.get("by") == "ada":  # the one approver: a junk payload must never decide
            payload["by"] = "mallory"
        return payload


def examples(template: dict[str, Any]) -> list[Any]:
    """The attacks every run tries first, whatever the seed: a 900 KB field in each place."""
    return [{**template, key: "x" * (9 * MB // 10)} for key in template]


RUN_DECISION = {"gate": "plan", "decision": "approve", "by": "mallory"}
TASK_DECISION = {"gate": "step", "task_id": "a", "decision": "approve", "by": "mallory"}
OUTCOME = {"run_id": "fuzz", "task_id": "t1", "action": "fit", "status": "completed"}
SUPPLIED = {"plan_name": "p", "plan_sha256": "2" * 64, "by": "mallory",
            "plan": {"decisions": [task("z")]}}


@EXTRACT_SKILLS.defn
async def extract_skills(req: ExtractInput) -> ExtractAnswer:
    return ExtractAnswer(created=[f"x@v{len(req.outcomes)}"])


@MAINTAIN_SKILLS.defn
async def maintain_skills(req: MaintainInput) -> MaintainAnswer:
    return MaintainAnswer(scored=req.finished)


@RECORD_OUTCOMES.defn
async def record_outcomes(outcomes: list[TaskOutcome]) -> RecordAnswer:
    return RecordAnswer(recorded=len(outcomes))


async def refused_update(handle: WorkflowHandle[Any, Any], name: str, payload: Any,
                         seed: int) -> None:
    """Send an update that must be refused, finally, by Assay's own error."""
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await handle.execute_update(name, payload,  # pyright: ignore[reportUnknownMemberType]
                                    result_type=GateRecord)
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError), f"seed {seed}: {name} failed with {cause!r}"
    assert cause.type in REFUSED and cause.non_retryable, f"seed {seed}: {cause!r}"
    assert len(cause.message) < 2000, f"seed {seed}: a refusal of {len(cause.message)} chars"


async def small_answer(handle: WorkflowHandle[Any, Any], query: str, kind: type[Any]) -> None:
    answer = await handle.query(query, result_type=kind)
    size = len(answer.model_dump_json() if hasattr(answer, "model_dump_json") else str(answer))
    assert size < ANSWER_BOUND, f"the {query} query answered {size:,} characters"


def own_writing(history: WorkflowHistory, seed: int) -> int:
    """Bytes a workflow wrote itself (all but signal payloads); no event over the bound."""
    total = 0
    for event in history.events:
        assert not event.HasField("workflow_task_failed_event_attributes"), (
            f"seed {seed}: {history.workflow_id} had a failed workflow task: "
            f"{event.workflow_task_failed_event_attributes.failure.message[:300]}")
        if event.HasField("workflow_execution_signaled_event_attributes"):
            continue
        assert event.ByteSize() <= EVENT_BOUND, (
            f"seed {seed}: {history.workflow_id} event {event.event_id} is {event.ByteSize():,}")
        total += event.ByteSize()
    return total


async def handled(handle: WorkflowHandle[Any, Any]) -> None:
    """Wait until ``handle``'s workflow has taken every signal sent so far.

    Signals that arrive while a workflow task runs are buffered and written together with its
    completion. A burst of near-2 MB signals then makes one write larger than the server's
    transaction limit, and the server terminates the workflow (``FORCE_CLOSE_COMMAND``) before
    any workflow code sees them: no handler can defend against that, only the server's
    payload-size limit can (see docs/operations/security.md). So the library gets one at a time.
    """
    async def idle() -> bool:
        described = await handle.describe()
        return not described.raw_description.HasField("pending_workflow_task")

    await wait_for(idle, timeout=30, what="the workflow to take its signals")


@pytest.mark.parametrize("seed", SEEDS)
async def test_no_payload_wedges_a_run_its_tasks_or_the_library(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path, seed: int) -> None:
    junk = Junk(random.Random(seed))
    harness = Harness(dev_env, task_queue, tmp_path, workflows=[SkillLibraryWorkflow],
                      extra=[extract_skills, maintain_skills, record_outcomes])
    gates = {"plan": {"human": True, "approvers": ["ada"]},
             "step": {"human": True, "approvers": ["ada"]}}
    async with harness.worker():
        library = await dev_env.client.start_workflow(
            SkillLibraryWorkflow.run, LibraryState(), id=library_id(f"fuzz-{uuid.uuid4().hex}"),
            task_queue=task_queue)
        run = await start(harness, [task("a")], gates=gates)
        await plan_gate_waiting(run)
        for payload in examples(RUN_DECISION) + [junk.mutate(RUN_DECISION)
                                                 for _ in range(ROUNDS)]:
            await run.signal("approve", payload)
            await refused_update(run, "decide", payload, seed)
        for payload in examples(SUPPLIED) + [junk.mutate(SUPPLIED) for _ in range(ROUNDS)]:
            await refused_update(run, "supply_plan", payload, seed)
        for payload in examples(OUTCOME) + [junk.mutate(OUTCOME) for _ in range(ROUNDS)]:
            await library.signal(TASK_FINISHED, payload)
            await handled(library)
        await small_answer(run, "progress", RunProgress)
        await small_answer(library, "state", dict)
        await run.execute_update(  # pyright: ignore[reportUnknownMemberType]
            "decide", GateDecision(gate="plan", decision="approve", by="ada"),
            result_type=GateRecord)

        child = dev_env.client.get_workflow_handle(f"{run.id}.task-a")
        await task_gate_waiting(child, "step")
        for payload in examples(TASK_DECISION) + [junk.mutate(TASK_DECISION)
                                                  for _ in range(ROUNDS)]:
            await child.signal("approve", payload)
            await refused_update(child, "decide", payload, seed)
            await run.signal("approve", payload)
        await small_answer(child, "progress", TaskProgress)
        await run.signal("approve", GateDecision(gate="step", task_id="a", decision="approve",
                                                 by="ada"))
        result = await run.result()

        before = (await library.query(SkillLibraryWorkflow.state))["finished"]
        for n in range(EXTRACT_EVERY):  # whatever it kept goes to an extraction
            await library.signal(TASK_FINISHED, TaskOutcome(
                run_id="fuzz", task_id=f"valid{n}", action="fit", status="completed"))

        async def extracted() -> bool:
            state = await library.query(SkillLibraryWorkflow.state)
            return state["finished"] == before + EXTRACT_EVERY and state["extractions"] >= 1

        await wait_for(extracted, timeout=20, what="the library to extract from valid outcomes")
        histories = [await h.fetch_history() for h in (run, child, library)]
        await library.terminate("test over")

    assert result.status == "completed", f"seed {seed}: {result.status_reason}"
    assert len(result.model_dump_json()) < ANSWER_BOUND
    for history in histories:
        written = own_writing(history, seed)
        assert written < OWN_HISTORY_BOUND, (
            f"seed {seed}: {history.workflow_id} wrote {written:,} bytes of history")
    assert all(len(e.model_dump_json()) < 5000 for e in harness.sink.events.values())
