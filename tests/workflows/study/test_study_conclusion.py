"""An ended study keeps the verdict a hypothesis's own test gave, whatever its children say."""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture.own_verdicts import run_own_verdicts


async def test_a_root_its_own_test_left_inconclusive_stays_so_though_its_child_is_supported(
        own_time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    _, final = await run_own_verdicts(own_time_env, tmp_path, queue=f"own-{tmp_path.name}")
    root, child = final.state.tree.get("H0"), final.state.tree.get("H1")
    assert (child.status, child.decided_in) == ("supported", 2)
    assert (root.status, root.decided_in, root.concluded) == ("inconclusive", None, "")
    assert final.state.summaries[0].verdicts[0].reason == "H0 inconclusive: task fit1 " \
                                                          "reported no verified auc"
