"""A task prepares its job's environment before running it, and ends on a refusal."""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture.environments import REFUSAL, SCIENCE, run_environments


async def test_jobs_run_in_their_prepared_environment_and_a_refusal_ends_the_task(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    _, report, fake = await run_environments(time_env, tmp_path)
    assert sorted(str(a.environment) for a in fake.asked) == ["nope", "science"]
    assert fake.ran_in == {"sci": SCIENCE.label(), "plain": "base"}

    statuses = {t.task_id: (t.status, t.status_reason) for t in report.tasks}
    assert statuses["sci"][0] == "completed" and statuses["plain"][0] == "completed"
    assert statuses["nope"] == ("failed",
                                "the job's environment could not be prepared: "
                                f"EnvironmentRefused: {REFUSAL}")
    sci = next(t for t in report.tasks if t.task_id == "sci")
    assert sci.provenance.environment == SCIENCE
    plain = next(t for t in report.tasks if t.task_id == "plain")
    assert plain.provenance.environment is None
