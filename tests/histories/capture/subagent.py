"""Capture the ``subagent`` histories: tasks run as subagents, their memory tried first.

Part of ``python -m tests.histories.capture``; ``python -m tests.histories.capture.subagent``
captures this scenario alone. A run of three jobless tasks, each matched to a subagent whose
job runs out of memory above a batch size:

- ``cured`` — the subagent's remembered fix (batch 64 → 8) cures the run; reflection is
  never asked;
- ``fallback`` — the remembered fix (64 → 32) does not help, the memory has nothing left and
  the rule table halves the batch again (32 → 16);
- ``refused`` — the remembered fix asks for more memory, the guardrails refuse it (recorded)
  and the rule table halves the batch (64 → 32).
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture import alone
from tests.workflows.agents_fakes import job
from tests.workflows.harness import Harness, task
from workflows.contracts.executive import PatchChange
from workflows.contracts.plan import Resources
from workflows.contracts.results import ResearchResult
from workflows.library.contracts import MatchAnswer, MatchInput, SkillApplication, SkillUse
from workflows.research.workflow import ResearchWorkflow

MEMORIES: dict[str, tuple[int, PatchChange]] = {
    "cured": (16, PatchChange(field="args.batch_size", old_value=64, new_value=8)),
    "fallback": (16, PatchChange(field="args.batch_size", old_value=64, new_value=32)),
    "refused": (32, PatchChange(field="resources.memory_mb", old_value=512, new_value=4096)),
}
"""Task id -> the largest batch its job fits, and its subagent's one remembered fix."""


async def match_skills(req: MatchInput) -> MatchAnswer:
    """A library whose subagent for each task supplies its job and its memory."""
    apps: list[SkillApplication] = []
    for t in req.tasks:
        limit, fix = MEMORIES[t.task_id]
        use = SkillUse(skill_id=f"fit-{t.task_id}@v1", name=f"fit-{t.task_id}", version=1,
                       kind="subagent", confidence=0.9, similarity=0.9,
                       instructions="Fit in batches; make the batch smaller when out of memory.",
                       recovery=[fix], rationale=f"skill fit-{t.task_id}@v1 (subagent)")
        apps.append(SkillApplication(task_id=t.task_id, use=use, job=job(
            "ok", args={"behave": f"oom_above:{limit}", "batch_size": 64},
            resources=Resources(memory_mb=512, timeout_s=60))))
    return MatchAnswer(applications=apps)


async def run_subagents(env: WorkflowEnvironment, root: Path) -> ResearchResult:
    """The run of the three tasks (each ends completed)."""
    harness = Harness(env, f"capture-{uuid.uuid4().hex[:8]}", root,
                      overrides={"match_skills": match_skills})
    req = harness.request([task(tid, job=False) for tid in MEMORIES], skills={"enabled": True})
    async with harness.worker():
        result = await env.client.execute_workflow(ResearchWorkflow.run, req, id=req.run_id,
                                                   task_queue=harness.queue)
    assert [t.status for t in result.tasks] == ["completed"] * len(MEMORIES), result.tasks
    return result


async def capture_alone() -> None:
    """Run this scenario alone and save its histories."""
    from tests.histories.capture.all import save

    async def scenario(env: WorkflowEnvironment, root: Path) -> None:
        await save(env, "subagent", await run_subagents(env, root))

    await alone(scenario)


if __name__ == "__main__":
    asyncio.run(capture_alone())
