"""What a task's result, a run's report and a job's outcome add to Assay's metrics."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from activities.metrics.definitions import REGISTRY, series_names
from activities.metrics.record import (
    Once,
    job_ran,
    phase_durations,
    retries,
    run_finished,
    task_finished,
)
from workflows.contracts.execution import ExecutionOutcome
from workflows.contracts.gates import GateRecord
from workflows.contracts.results import (
    PHASE_MARKS,
    ApprovalProvenance,
    PhaseAttempts,
    PhaseMark,
    Provenance,
    RunReport,
    TaskResult,
)

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def value(name: str, **labels: str) -> float:
    """A sample's value in the registry now (0 when the series does not exist yet)."""
    return REGISTRY.get_sample_value(name, labels) or 0.0


def retried_task() -> TaskResult:
    """A task reviewed twice, waiting 90 s at its gate, run three times with one debug round."""
    marks = [("intake", 0), ("implement", 1), ("review", 3), ("approval_retry", 4),
             ("review", 5), ("human_gate", 6), ("execute", 96), ("execution_retry", 100),
             ("execute", 101), ("execution_retry", 104), ("debug", 105), ("verify", 110),
             ("finalize", 111), ("done", 112)]
    gate = GateRecord(gate="step", task_id="t", status="approved", opened_at=at(6),
                      decided_at=at(96), by="ada")
    return TaskResult(
        task_id="t", status="completed", status_reason="ok", started_at=at(0),
        finished_at=at(112), phases=[PhaseMark(phase=p, at=at(s)) for p, s in marks],
        provenance=Provenance(approval=ApprovalProvenance(attempts=2),
                              execution=PhaseAttempts(attempts=3),
                              verification=PhaseAttempts(attempts=1), approvals=[gate]))


def test_each_phase_lasts_until_the_next_and_done_is_no_phase() -> None:
    spans = phase_durations(retried_task())
    assert spans[:3] == [("intake", 1.0), ("implement", 2.0), ("review", 1.0)]
    assert ("human_gate", 90.0) in spans
    assert [s for p, s in spans if p == "execute"] == [4.0, 3.0]
    assert spans[-1] == ("finalize", 1.0) and "done" not in dict(spans)


def test_the_last_phase_before_the_end_lasts_until_the_task_finished() -> None:
    task = retried_task()
    task.phases = task.phases[:-2]  # ends in verify, no finalize or done recorded
    assert phase_durations(task)[-1] == ("verify", 2.0)
    task.finished_at = None
    assert phase_durations(task)[-1][0] == "debug"


def test_the_gap_where_long_phase_lists_were_cut_is_no_duration() -> None:
    half = PHASE_MARKS // 2
    marks = [PhaseMark(phase="execute" if i % 2 else "execution_retry", at=at(i))
             for i in range(half)]
    marks += [PhaseMark(phase="execute" if i % 2 else "execution_retry", at=at(1000 + i))
              for i in range(half)]
    task = TaskResult(task_id="t", status="failed", status_reason="x", phases=marks,
                      finished_at=at(2000))
    spans = phase_durations(task)
    assert len(spans) == PHASE_MARKS - 1
    assert max(s for _, s in spans[:-1]) == 1.0  # the 970 s gap is left out
    assert spans[-1][1] == pytest.approx(2000 - 1000 - half + 1)


def test_retries_are_attempts_beyond_the_first_and_debug_rounds() -> None:
    assert retries(retried_task()) == {"approval": 1, "execution": 2, "verification": 0,
                                       "debug": 1}
    assert retries(TaskResult(task_id="t", status="blocked", status_reason="x")) == {
        "approval": 0, "execution": 0, "verification": 0, "debug": 0}


def test_a_finished_task_is_counted_once_with_its_phases_retries_and_gate_wait() -> None:
    before = {
        "tasks": value("assay_tasks_total", status="completed"),
        "execute": value("assay_task_phase_seconds_count", phase="execute"),
        "execute_s": value("assay_task_phase_seconds_sum", phase="execute"),
        "retries": value("assay_task_retries_total", subphase="execution"),
        "gate": value("assay_gate_wait_seconds_sum", gate="step", decision="approved"),
    }
    once = Once()
    assert task_finished("run-metrics-1", retried_task(), once=once)
    assert not task_finished("run-metrics-1", retried_task(), once=once)  # rewritten report
    assert value("assay_tasks_total", status="completed") == before["tasks"] + 1
    assert value("assay_task_phase_seconds_count", phase="execute") == before["execute"] + 2
    assert value("assay_task_phase_seconds_sum", phase="execute") == before["execute_s"] + 7
    assert value("assay_task_retries_total", subphase="execution") == before["retries"] + 2
    assert value("assay_gate_wait_seconds_sum", gate="step",
                 decision="approved") == before["gate"] + 90


def test_a_run_is_counted_once_with_the_waits_of_its_decided_gates() -> None:
    gates = [GateRecord(gate="plan", status="approved", opened_at=at(0), decided_at=at(30)),
             GateRecord(gate="plan", status="waiting", opened_at=at(40))]
    report = RunReport(run_id="run-metrics-2", plan_name="p", plan_sha256="0" * 64,
                       status="partial", timestamp="t", started_at=at(0), finished_at=at(50),
                       gates=gates)
    runs = value("assay_runs_total", status="partial")
    waits = value("assay_gate_wait_seconds_count", gate="plan", decision="approved")
    once = Once()
    assert run_finished(report, once=once) and not run_finished(report, once=once)
    assert value("assay_runs_total", status="partial") == runs + 1
    assert value("assay_gate_wait_seconds_count", gate="plan", decision="approved") == waits + 1
    assert value("assay_gate_wait_seconds_count", gate="plan", decision="waiting") == 0


def test_once_forgets_the_oldest_keys_beyond_its_size() -> None:
    once = Once(size=2)
    # "a" seen again is kept as recent; "b" is the oldest when "c" comes, so it is forgotten
    assert [once.first(k) for k in ("a", "b", "a", "c", "a", "b")] == [
        True, True, False, True, False, True]


def test_a_job_attempt_adds_its_time_cpu_and_peak_memory_by_outcome() -> None:
    jobs = value("assay_sandbox_jobs_total", outcome="out_of_memory")
    cpu = value("assay_sandbox_cpu_seconds_sum", outcome="out_of_memory")
    memory = value("assay_sandbox_peak_memory_bytes_sum", outcome="out_of_memory")
    job_ran(ExecutionOutcome(outcome="out_of_memory", duration_s=2.0, cpu_s=1.5,
                             peak_memory_mb=256.0))
    assert value("assay_sandbox_jobs_total", outcome="out_of_memory") == jobs + 1
    assert value("assay_sandbox_cpu_seconds_sum", outcome="out_of_memory") == cpu + 1.5
    assert value("assay_sandbox_peak_memory_bytes_sum",
                 outcome="out_of_memory") == memory + 256 * 2**20


def test_series_names_cover_the_registry_and_the_sdk_metered_model_metrics() -> None:
    names = series_names()
    assert {"assay_tasks_total", "assay_task_phase_seconds_bucket", "assay_skill_uses_total",
            "assay_model_calls", "assay_model_cost_usd_sum"} <= names
    assert "assay_model_calls_total" not in names  # the SDK adds no suffix
    assert all(family.documentation for family in REGISTRY.collect())


def test_recording_a_job_loads_no_model_client() -> None:
    """A sandbox worker's first job once waited for the model SDK to import, event loop held."""
    code = (
        "import sys\n"
        "from activities.metrics import record\n"
        "from workflows.contracts.execution import ExecutionOutcome\n"
        "record.job_ran(ExecutionOutcome(outcome='succeeded', duration_s=0.1))\n"
        "print(','.join(m for m in ('anthropic', 'activities.llm.gateway') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout.strip() == ""
