"""``close_cycle``: a cycle's report read and judged; a report that cannot be read, and a
plan that contradicts the study's tree."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.artifacts.store import LocalArtifactStore
from activities.study.cycles import StudyCycles
from tests.workflows.study.factories import decision, hypothesis, plan, report, result, tree
from workflows.contracts.cycles import CloseCycleInput, ResolveReuseInput
from workflows.contracts.execution import Artifact
from workflows.contracts.results import ReportPaths, ResearchResult, RunReport, TaskSummary
from workflows.contracts.study import StudyPolicy, StudyState

close_cycle = StudyCycles().close_cycle  # reports on this host only

PLAN = plan([decision("1", hypothesis="H1")],
            hypotheses=[hypothesis("H1").model_dump(mode="json")])


def written(folder: Path, the_report: RunReport) -> ResearchResult:
    """The run's result, its report's results JSON written to ``folder``."""
    path = folder / "execution_results.json"
    path.write_text(the_report.model_dump_json())
    fields = {**the_report.run_fields(), "report": ReportPaths(
        results_json=str(path), summary_md=str(folder / "summary.md"))}
    return ResearchResult.model_validate(fields)


def state(**fields: object) -> StudyState:
    return StudyState.model_validate({"study_id": "s", "goal": "g", **fields})


async def test_a_cycle_is_judged_from_its_report_and_keeps_where_it_is(tmp_path: Path) -> None:
    done = written(tmp_path, report([result("1", metrics={"auc": 0.9})], PLAN))
    after = await ActivityEnvironment().run(close_cycle, CloseCycleInput(state=state(),
                                                                         result=done))
    assert after.cycles == 1 and after.tree.get("H1").status == "supported"
    assert after.summaries[0].results_json == str(tmp_path / "execution_results.json")
    assert after.summaries[0].tasks[0].metrics == {"auc": 0.9}


async def test_the_studys_plan_is_used_when_the_report_carries_none(tmp_path: Path) -> None:
    done = written(tmp_path, report([result("1", metrics={"auc": 0.5})]))
    after = await ActivityEnvironment().run(close_cycle, CloseCycleInput(
        state=state(), result=done, plan=PLAN))
    assert after.tree.get("H1").status == "refuted"


async def test_an_unreadable_report_leaves_each_tasks_status_and_carries_the_failures(
        tmp_path: Path) -> None:
    done = written(tmp_path, report([result("1", status="failed", reason="exit 1")], PLAN))
    Path(done.report.results_json if done.report else "").write_text("{not json")
    done = done.model_copy(update={"tasks": [TaskSummary(
        task_id="1", priority="MEDIUM", action="do 1", status="failed",
        status_reason="exit 1")]})
    after = await ActivityEnvironment().run(close_cycle, CloseCycleInput(
        state=state(), result=done, plan=PLAN))
    assert after.summaries[0].unfinished == 1
    assert [c.task_id for c in after.carried] == ["1"]
    assert after.tree.get("H1").status in ("open", "inconclusive")


async def test_a_plan_that_changes_a_decided_hypothesis_is_refused(tmp_path: Path) -> None:
    decided = tree(hypothesis("H1", status="refuted", decided_in=1))
    changed = plan([decision("1", hypothesis="H1")], hypotheses=[
        hypothesis("H1", threshold=0.1).model_dump(mode="json")])
    done = written(tmp_path, report([result("1", metrics={"auc": 0.9})], changed))
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(close_cycle, CloseCycleInput(
            state=state(tree=decided, policy=StudyPolicy()), result=done))
    assert caught.value.non_retryable and caught.value.type == "InvalidPlan"
    assert "cycle 1" in str(caught.value)


async def test_a_cycle_written_on_another_host_is_read_and_reused_from_the_store(
        tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    artifact = Artifact(name="model.json", size=2, sha256="a" * 64, path="model.json")
    done = written(tmp_path, report([result("1", metrics={"auc": 0.9}, artifacts=[artifact])],
                                    PLAN))
    paths = done.report
    assert paths is not None
    stored = paths.model_copy(update={
        "results_sha256": store.put(Path(paths.results_json)).sha256})
    Path(paths.results_json).unlink()  # the orchestration host that wrote it is elsewhere
    done = done.model_copy(update={"report": stored})
    cycles = StudyCycles(store)

    after = await ActivityEnvironment().run(cycles.close_cycle,
                                            CloseCycleInput(state=state(), result=done))
    assert after.tree.get("H1").status == "supported"  # judged on the stored report
    assert after.summaries[0].results_sha256 == stored.results_sha256
    reuse = ResolveReuseInput(refs=["c1.1"], reports={1: paths.results_json},
                              digests={1: stored.results_sha256})
    [found] = await ActivityEnvironment().run(cycles.resolve_reuse, reuse)
    assert (found.task_id, found.name, found.sha256) == ("c1.1", "model.json", "a" * 64)
    with pytest.raises(ApplicationError, match="cannot be read here"):  # without the store
        await ActivityEnvironment().run(StudyCycles().resolve_reuse, reuse)
