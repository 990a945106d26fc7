"""The agents pool's two reviewers in one dispatch give the verdicts each gives alone."""

from __future__ import annotations

from temporalio.testing import ActivityEnvironment

from activities.review.panel import review_ops, review_ops_quality_safety, review_quality_safety
from workflows.contracts.plan import JobSpec, Resources
from workflows.contracts.verdicts import ReviewInput


def _input(code: str) -> ReviewInput:
    job = JobSpec(code=code, source=code, filename="job.py",
                  resources=Resources(memory_mb=256, timeout_s=20))
    return ReviewInput(task_id="t", action="fit a line", job=job)


async def test_one_dispatch_gives_ops_then_quality_safety_each_as_alone() -> None:
    env = ActivityEnvironment()
    for code in ("print('hi')\n", "import os\nos.system('rm -rf /')\n"):
        req = _input(code)
        together = await env.run(review_ops_quality_safety, req)
        alone = [await env.run(review_ops, req), await env.run(review_quality_safety, req)]
        assert [v.reviewer for v in together] == ["ops", "quality_safety"]
        assert together == alone
    assert together[1].verdict == "REJECT"  # the unsafe job is still refused by its reviewer
