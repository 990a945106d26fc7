"""The run ledger: append-only, hash-chained, idempotent, and refusing a broken chain."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.reports.ledger import LedgerError, append_ledger, ledger_entries, verify_ledger
from activities.reports.writer import ReportWriter
from workflows.contracts.gates import GateRecord
from workflows.contracts.reflection import PatchChange
from workflows.contracts.results import (
    AppliedPatch,
    PlanSource,
    RunReport,
    TaskResult,
    WriteReportInput,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)
EARLIER = Path(__file__).resolve().parents[2] / "data" / "ledgers" / "run_ledger.jsonl"
"""A ledger as the release before the shared chain module wrote it (two runs, seven lines)."""


def result(run_id: str = "run-1") -> RunReport:
    task = TaskResult(task_id="a", status="completed", status_reason="ok")
    task.provenance.approvals.append(GateRecord(gate="step", task_id="a", status="approved",
                                                opened_at=NOW, by="ada"))
    task.provenance.patches.append(AppliedPatch(
        patch_id="patch-1", phase="execution_retry", root_cause="out_of_memory",
        changes=[PatchChange(field="args.batch_size", old_value=64, new_value=32)],
        outcome="applied"))
    plan_gate = GateRecord(gate="plan", status="approved", opened_at=NOW, by="ada")
    return RunReport(run_id=run_id, plan_name="p", plan_sha256="0" * 64,
                     status="completed", timestamp="20260101_000000", started_at=NOW,
                     finished_at=NOW, tasks=[task], gates=[plan_gate])


def test_entries_are_appended_once_and_chained(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    entries = ledger_entries(result())
    assert [e["kind"] for e in entries] == ["approval", "approval", "patch"]
    assert append_ledger(path, entries) == 3
    assert append_ledger(path, entries) == 0, "a retried write appends nothing"
    assert verify_ledger(path) == 3


@pytest.mark.parametrize("tamper", ["edit", "delete", "swap"])
def test_any_tampering_breaks_the_chain(tmp_path: Path, tamper: str) -> None:
    path = tmp_path / "ledger.jsonl"
    append_ledger(path, ledger_entries(result()))
    lines = path.read_text().splitlines()
    if tamper == "edit":
        first = json.loads(lines[0])
        first["by"] = "mallory"
        lines[0] = json.dumps(first, sort_keys=True)
    elif tamper == "delete":
        del lines[1]
    else:
        lines[1], lines[2] = lines[2], lines[1]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(LedgerError, match="chain broken"):
        verify_ledger(path)
    with pytest.raises(LedgerError):
        append_ledger(path, ledger_entries(result("run-2")))


async def test_report_that_cannot_be_written_is_a_permanent_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "runs"
    blocker.write_text("a file where the runs folder should be")
    writer = ReportWriter(blocker)
    with pytest.raises(ApplicationError) as info:
        await ActivityEnvironment().run(writer.write_report, WriteReportInput(report=result()))
    assert info.value.type == "ReportUnwritable" and info.value.non_retryable
    assert "cannot write the report of run-1" in str(info.value)


def test_a_ledger_of_an_earlier_release_verifies_and_is_extended_byte_for_byte(
        tmp_path: Path) -> None:
    earlier = EARLIER.read_text(encoding="utf-8")
    lines = earlier.splitlines()
    assert verify_ledger(EARLIER) == len(lines) == 7
    entries = [{k: v for k, v in json.loads(line).items() if k != "prev"} for line in lines]
    path = tmp_path / "ledger.jsonl"
    assert append_ledger(path, entries[:3]) == 3
    assert append_ledger(path, entries) == 4
    assert path.read_bytes() == EARLIER.read_bytes()


async def test_a_supplied_plan_is_in_the_ledger_with_its_sha256_and_author(
        tmp_path: Path) -> None:
    run = result()
    run.supplied_plan = PlanSource(sha256="cd" * 32, by="ada", name="my-plan")
    writer = ReportWriter(tmp_path)
    paths = await ActivityEnvironment().run(writer.write_report, WriteReportInput(report=run))

    lines = [json.loads(line) for line in Path(paths.ledger).read_text().splitlines()]
    assert lines[0]["kind"] == "plan"
    assert (lines[0]["sha256"], lines[0]["by"], lines[0]["name"]) == ("cd" * 32, "ada", "my-plan")
    assert verify_ledger(Path(paths.ledger)) == 4
    assert [e["kind"] for e in ledger_entries(result())] == ["approval", "approval", "patch"]
