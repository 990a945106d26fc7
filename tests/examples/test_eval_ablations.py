"""The shipped suite's ablations, scored offline: what the debuggers and the model reviewers
are worth on the hand-recorded goals, and why.

Nothing learned is read or written (skills and memory off, as ``make eval``'s last line runs
it), so each run asks exactly what its recording holds. The full configuration replays each
goal's own recording. Without the debuggers a run stops at its first failed job: the heart
transplant goal fails (cause ``code``) with the first requests of its own recording, so no
other recording is needed. Without the model reviewers, the draft a reviewer had sent back
runs as written: the students' logit is fitted with no intercept and the answer misses both
labels; that run's traffic (the same planner and coder requests, then
an output processor shown the unreviewed job's numbers) was recorded by hand too, in
``examples/eval/ablations/<configuration>/<task>.jsonl``, the layout ``--replay DIR`` reads.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from client.assay import AssayClient
from tests.support.e2e import PINNED_ENVIRONMENTS, ROOT, isolated_settings, pools_serving
from workers.evaluation.configurations import ABLATIONS as ABLATION_NAMES
from workers.evaluation.configurations import configurations
from workers.evaluation.runner import Evaluation, Sample
from workers.evaluation.suite import load_suite
from workers.evaluation.traffic import Traffic

pytestmark = pytest.mark.integration
EVAL = ROOT / "examples" / "eval"
ABLATIONS = EVAL / "ablations"
GOALS = ("e3-heart-survival", "e3-spector-logit", "e3-sunspots-peak")


def test_each_ablated_recording_is_named_by_a_make_eval_configuration_and_a_task() -> None:
    suite, _ = load_suite(EVAL / "suite.json")
    lines: list[tuple[list[str], list[str]]] = [  # make eval's three lines: ablate, off
        (list(ABLATION_NAMES), []), (["memory", "debuggers", "model-review"], ["skills"]),
        (["debuggers", "model-review"], ["skills", "memory"])]
    names = {c.name for ablate, off in lines for c in configurations(ablate, off)}
    shipped = sorted(ABLATIONS.glob("*/*.jsonl"))
    assert shipped and all(p.parent.name in names for p in shipped)
    assert {p.stem for p in shipped} <= {t.id for t in suite.tasks if t.replay}


@pytest.mark.timeout(1800)
async def test_the_debuggers_and_the_model_reviewers_each_change_the_pass_rate_offline(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str, shared_environments: Path) -> None:
    suite, base = load_suite(EVAL / "suite.json")
    suite = suite.model_copy(update={"tasks": [t for t in suite.tasks if t.id in GOALS]})
    settings = isolated_settings(tmp_path / "assay", task_queue,
                                 environments_root=shared_environments,
                                 environments_dir=PINNED_ENVIRONMENTS)
    evaluation = Evaluation(suite, base, settings=settings, live=False, parallel=3,
                            timeout_s=1200, traffic=Traffic(replay=ABLATIONS))
    full, no_debuggers, no_review = configurations(["debuggers", "model-review"],
                                                   ["skills", "memory"])
    runs: dict[str, dict[str, Sample]] = {}
    async with pools_serving(settings, fresh_database_url, dev_env.client):
        client = AssayClient(dev_env.client, task_queue=settings.queue_orchestration)
        for config in (full, no_debuggers, no_review):
            samples = await evaluation.run_configuration(client, config, 1)
            runs[config.name] = {s.task: s for s in samples}

    assert not any(s.skipped for r in runs.values() for s in r.values())  # all scored
    assert {t: s.passed for t, s in runs[full.name].items()} == dict.fromkeys(GOALS, True)
    stopped = runs[no_debuggers.name]  # the first job failed and nothing fixed it
    assert {t: (s.passed, s.status, s.cause) for t, s in stopped.items()} == {
        "e3-heart-survival": (False, "failed", "code"),
        "e3-spector-logit": (True, "completed", ""),
        "e3-sunspots-peak": (True, "completed", "")}
    assert "output_processor" not in stopped["e3-heart-survival"].calls_by_role
    unreviewed = runs[no_review.name]  # no intercept in the students' logit
    assert {t: s.passed for t, s in unreviewed.items()} == {
        "e3-heart-survival": True, "e3-spector-logit": False, "e3-sunspots-peak": True}
    assert sorted(unreviewed["e3-spector-logit"].missed) == [
        "@odds_ratio_psi[5.136] (want 10.791)", "@p_value_psi[0.044] (want 0.025)"]
    assert unreviewed["e3-spector-logit"].cause == "verification"
    assert not any(r.startswith("reviewer") for s in unreviewed.values()
                   for r in s.calls_by_role)
