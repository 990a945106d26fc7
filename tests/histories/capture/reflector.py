"""Capture the ``reflector`` histories: an unnamed failure patched by the reflector role.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.reflector``
captures this scenario alone (the other saved histories stay as they are). Task ``a``'s job
crashes without a traceback, so the rule table says ``unknown``; the run has a model, so the
reflector (a fake of the role whose answer goes through the real scoring and guardrails)
proposes ``args.behave = ok``; the patched job is reviewed again, runs and is verified.
Task ``b`` crashes too, and the reflector proposes more memory: the guardrails refuse it,
the refusal is recorded, and ``b`` fails with the rule table's verdict.

The ``reflector_deferred`` histories (``run_deferred``): the reflector names a root cause the
rule table does not know, so its patch scores 0.65 and needs a person; the run has no error
gate, so the patch is deferred, in words that fit a run that is no study's cycle.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from activities.agents.reflector import reflector_note
from tests.histories.capture import alone
from tests.workflows.agents_fakes import spend
from tests.workflows.harness import Harness, task
from workflows.agents.reflector import ReflectAnswer, ReflectorOutput, ReflectRequest
from workflows.contracts.results import RunReport


@dataclass
class FakeReflector:
    """The reflector role's answers per task, scored and guarded by the real code."""

    asked: list[ReflectRequest] = field(default_factory=list[ReflectRequest])
    root_cause: str = "invalid_value"

    async def reflect_failure(self, req: ReflectRequest) -> ReflectAnswer:
        self.asked.append(req)
        change = ({"field": "args.behave", "value": "ok"} if req.task_id == "a"
                  else {"field": "resources.memory_mb", "value": 4096})
        out = ReflectorOutput.model_validate({
            "root_cause": self.root_cause, "likely_fix": "change the setting",
            "reason": "the job's setting makes it crash", "changes": [change]})
        return ReflectAnswer(note=reflector_note(req, out), spend=spend("reflector"))


async def run_reflector(env: WorkflowEnvironment, root: Path, *,
                        model: bool = True) -> tuple[RunReport, FakeReflector]:
    """The reflector scenario (see the module's docstring); ``model`` off: no reflector."""
    reflector = FakeReflector()
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root,
                      overrides={"reflect_failure": reflector.reflect_failure})
    agents = {"enabled": model, "model_review": False, "debuggers": False}
    report = await harness.run([task("a", behave="crash"), task("b", behave="crash")],
                               agents=agents)
    return report, reflector


async def run_deferred(env: WorkflowEnvironment, root: Path) -> RunReport:
    """The ``reflector_deferred`` scenario (see the module's docstring)."""
    reflector = FakeReflector(root_cause="stale_cache")
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root,
                      overrides={"reflect_failure": reflector.reflect_failure})
    agents = {"enabled": True, "model_review": False, "debuggers": False}
    return await harness.run([task("a", behave="crash")], agents=agents)


async def capture_alone() -> None:
    """Run these scenarios alone and save their histories."""
    from tests.histories.capture.all import save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        report, _ = await run_reflector(env, root)
        await save(env, "reflector", report)
        await save(env, "reflector_deferred", await run_deferred(env, root / "deferred"))

    await alone(scenario)


if __name__ == "__main__":
    import asyncio

    asyncio.run(capture_alone())
