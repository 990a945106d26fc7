"""``assay branches``: the tree and the comparison tables on the terminal, and ``--json``.

Until the run workflow answers ``branches`` itself, a stand-in workflow on the dev server
answers the query as the contract says, so the command's reading of an open run (its query),
of a closed one (its result and report) and of linked runs (visibility) runs for real.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.common import SearchAttributePair, TypedSearchAttributes
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker
from typer.testing import CliRunner

from client.assay import AssayClient
from tests.activities.reports.test_branches import HOSTILE, branch, score, sweep
from tests.support.e2e import ROOT
from tests.support.waiting import wait_for
from workers.cli.branches import BranchView, Linked, print_branches, read_branches
from workers.cli.main import app
from workflows.constants import KIND_KEY, PARENT_KEY
from workflows.contracts.branches import BranchRecord, BranchTree
from workflows.contracts.results import ReportPaths, ResearchResult, RunProgress, RunReport

WHEN = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def test_an_open_run_prints_its_tree_and_a_table_per_group(capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    tree = sweep()
    tree.paused, tree.holding = True, True
    tree.branches.append(branch("seed-7", group="g2", status="completed", selection="person",
                                score=score(1, 0.7)))
    tree.main["g2"] = score(2, 0.5)
    tree.steering.append("ada paused")
    print_branches(BranchView(tree, choosing=True))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "run run-1: 4 branches, paused, holding open for branches"
    assert "  close it when done: assay close run-1" in out
    assert "  * lr-0.1 [optimisation] from 3:execute by ada: completed (selected)" in out
    assert "from task 3 at execute (group g1), selection best" in out
    header = out.index("from task 3 at execute (group g1), selection best") + 1
    assert out[header].split("  ")[:2] == ["rank", "line"] and "accuracy (maximize)" in out[header]
    assert out[header + 1].split()[:5] == ["1", "lr-0.1", "yes", "2/2", "0.9123"]
    assert out[header + 2].split()[:5] == ["2", "main", "yes", "2/2", "0.8123"]
    assert ("from task 3 at execute (group g2), selection person; waiting for a person: "
            "assay approve run-1 --gate branch --choose NAME") in out
    assert out[-1] == "steering: ada paused"


def test_a_closed_run_lists_the_runs_linked_to_it(capsys: pytest.CaptureFixture[str]) -> None:
    hostile = BranchRecord(name=HOSTILE, from_task="3", status="failed")
    view = BranchView(BranchTree(run_id="run-1", branches=[hostile]), status="completed",
                      parent="run-0", linked=[Linked("run-1.b1", "run", "running")])
    print_branches(view)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[:3] == ["run run-1: 1 branch, ended (completed)",
                         "  branched from the closed run run-0 (its tasks reused)",
                         "  it takes no branch now; `assay branch run-1 ...` starts a new run "
                         "linked to it"]
    assert "linked to it (AssayParent=run-1):" in lines
    assert lines[-1].split() == ["run-1.b1", "run", "running"]
    assert "\x1b" not in out and "<script>alert(1)</script> --> x # heading" in out
    assert not any(line.startswith("# heading") for line in lines)


def test_a_run_id_that_would_bend_the_visibility_query_is_refused() -> None:
    result = CliRunner().invoke(app, ["branches", 'x" OR AssayParent!="'])
    assert result.exit_code == 2 and "is not a run ID" in result.stderr


@workflow.defn(name="BranchesStandIn", sandboxed=False)
class StandIn:
    """Answers ``branches`` as a run does; ends with a result carrying the tree when told."""

    def __init__(self) -> None:
        self.tree: BranchTree | None = None
        self.done = False

    @workflow.run
    async def run(self, result: ResearchResult) -> ResearchResult:
        """Hold the tree until ``finish``, then end with ``result``."""
        self.tree = result.branches
        await workflow.wait_condition(lambda: self.done)
        return result

    @workflow.query
    def progress(self) -> RunProgress:
        """Running, at no gate."""
        assert self.tree is not None
        return RunProgress(run_id=self.tree.run_id, phase="execute", status="running")

    @workflow.query
    def branches(self) -> BranchTree:
        """The tree, as the run's ``branches`` query answers it."""
        assert self.tree is not None
        return self.tree

    @workflow.signal
    def finish(self) -> None:
        """End the run."""
        self.done = True


def run_result(run_id: str, tree: BranchTree, report: Path | None = None) -> ResearchResult:
    paths = (ReportPaths(results_json=str(report), summary_md=str(report))
             if report is not None else None)
    return ResearchResult(run_id=run_id, plan_name="p", plan_sha256="0" * 64,
                          status="completed", timestamp="t", started_at=WHEN, finished_at=WHEN,
                          branches=tree, parent="run-0", report=paths)


async def test_branches_reads_the_query_then_the_report_and_the_linked_runs(
        dev_env: WorkflowEnvironment, task_queue: str, tmp_path: Path) -> None:
    client = dev_env.client
    run_id = f"assay-run-branches-{uuid.uuid4().hex[:10]}"
    tree = sweep().model_copy(update={"run_id": run_id})
    written = tree.model_copy(update={"steering": ["ada closed"]})
    report = tmp_path / "results.json"
    report.write_text(RunReport(**run_result(run_id, written).run_fields()).model_dump_json())
    assay = AssayClient(client, task_queue=task_queue)
    async with Worker(client, task_queue=task_queue, workflows=[StandIn]):
        handle = await client.start_workflow(StandIn.run, run_result(run_id, tree, report),
                                             id=run_id, task_queue=task_queue)
        open_view = await read_branches(assay, run_id)
        assert (open_view.tree, open_view.closed, open_view.linked) == (tree, False, [])
        code, out, err = await cli(dev_env, tmp_path, "branches", run_id, "--json")
        assert code == 0, err
        assert BranchTree.model_validate_json(out) == tree
        linked = await client.start_workflow(
            StandIn.run, run_result(f"{run_id}.b1", BranchTree(run_id=f"{run_id}.b1")),
            id=f"{run_id}.b1", task_queue=task_queue,
            search_attributes=TypedSearchAttributes([SearchAttributePair(PARENT_KEY, run_id),
                                                     SearchAttributePair(KIND_KEY, "run")]))
        await handle.signal(StandIn.finish)
        await handle.result()

        async def listed() -> bool:
            return bool((await read_branches(assay, run_id)).linked)

        await wait_for(listed, timeout=30, what="the linked run in visibility")
        closed = await read_branches(assay, run_id)
        assert closed.tree == written and closed.parent == "run-0"  # the report's tree
        assert closed.linked == [Linked(f"{run_id}.b1", "run", "running")]
        report.unlink()  # unreadable here: the workflow result's tree
        assert (await read_branches(assay, run_id)).tree == tree
        await linked.cancel()  # ended without a result: its history answers the query
        await wait_for(lambda: _ended(assay, linked.id), timeout=30, what="the cancellation")
        gone = await read_branches(assay, linked.id)
        assert (gone.status, gone.tree) == ("canceled", BranchTree(run_id=f"{run_id}.b1"))


async def _ended(assay: AssayClient, run_id: str) -> bool:
    return await assay.status(run_id) != "running"


async def cli(env: WorkflowEnvironment, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    """Run ``assay`` in a process of its own against the dev server."""
    environ = {**os.environ, "ASSAY_TEMPORAL_ADDRESS": env.client.service_client.config.target_host,
               "ASSAY_DATA_DIR": str(tmp_path / "assay")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "workers.cli", *args, env=environ, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()
