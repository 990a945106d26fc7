"""The study workflow's own contracts: how a study starts, answers and ends.

A study (``workflows.study.workflow.StudyWorkflow``) runs cycles, each a child
``ResearchWorkflow`` with the id ``<study>.cycle-<n>``, and continues as new between cycles
with a :class:`StudyInput` carrying its :class:`~workflows.contracts.study.StudyState`. The
next cycle's plan comes from, in order: a plan a person supplied (the ``supply_plan``
update), the study's own cycle plans (``plans``, given at start), or the planner (a goal
study with agents on). A study started from a plan runs it as its first cycle.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from workflows.contracts.base import BY_CHARS, COMMENT_CHARS, Channel, Model, PlainText, StrictModel
from workflows.contracts.gates import GateRecord
from workflows.contracts.goal import DataFile
from workflows.contracts.plan import Plan
from workflows.contracts.policy import Queues, RunPolicy
from workflows.contracts.pools import Pool
from workflows.contracts.results import ReportPaths, ResearchResult
from workflows.contracts.roles import AgentRequest, RoleAnswer
from workflows.contracts.study import MAX_CYCLES, CycleDecision, StudyState
from workflows.contracts.synthesis import StudySynthesis

StudyStatus = Literal["running", "completed", "failed", "cancelled"]
"""``completed``: stopped by its rules or a person; ``failed``: a cycle could not run."""


class CyclePlan(Model):
    """A plan for one cycle: the plan, its name and digest, and who gave it."""

    plan_name: str
    plan_sha256: str
    plan: Plan
    by: PlainText = ""


class StudyStop(StrictModel):
    """The payload of a study's ``stop`` signal: it ends after the cycle that runs."""

    by: PlainText = Field(min_length=1, max_length=BY_CHARS)
    comment: PlainText = Field(default="", max_length=COMMENT_CHARS)
    channel: Channel | None = None
    """How it was sent (``cli``, ``python``; none: ``temporal``)."""


class StudyInput(Model):
    """Input of a StudyWorkflow, and what it continues as new with."""

    state: StudyState
    plans: list[CyclePlan] = Field(default_factory=list[CyclePlan], max_length=MAX_CYCLES)
    """Plans of the cycles still to come, in order (the first is the next cycle's)."""
    data: list[DataFile] = Field(default_factory=list[DataFile])
    policy: RunPolicy = Field(default_factory=RunPolicy)
    """Each cycle's run policy; its ``gates.cycle`` is the study's cycle gate."""
    queues: Queues = Field(default_factory=Queues)
    stop: StudyStop | None = None
    """A stop asked for before the study continued as new."""
    started_at: datetime | None = None
    """When the study's first cycle started (kept across continue-as-new)."""


class StudyProgress(Model):
    """Answer of a StudyWorkflow's ``progress`` query."""

    study_id: str
    phase: str
    """``cycle`` (a cycle runs), ``deciding``, ``waiting`` (a gate, or a plan), ``report``,
    ``done``."""
    cycle: int
    run_id: str | None = None
    """The running cycle's run."""
    waiting: GateRecord | None = None
    needs_plan: bool = False
    """The study waits for a person's plan for its next cycle (``assay plan STUDY FILE``)."""
    state: StudyState
    stop: StudyStop | None = None
    approvers: list[str] = Field(default_factory=list[str])
    """Who may decide the cycle gate and stop the study (empty: anyone)."""
    refused: list[str] = Field(default_factory=list[str])
    """The latest decisions the study refused (who: why), oldest first."""


class StudyResult(Model):
    """A StudyWorkflow's result: how it ended and where its report is."""

    study_id: str
    status: StudyStatus
    cycles: int
    decision: CycleDecision | None = None
    """The last decision (``stop`` and why, for a study that ended by its rules)."""
    reason: str = ""
    report: ReportPaths | None = None


class StudyReportInput(Model):
    """Input of the ``write_study_report`` activity."""

    state: StudyState
    folder: str = ""
    """The study's report folder; empty: the writer's own (``<data>/studies/<study>``)."""
    status: StudyStatus = "running"
    started_at: datetime | None = None
    finished_at: datetime | None = None
    reason: str = Field(default="", max_length=2000)
    """How the study ended (empty while it runs)."""
    synthesis: StudySynthesis | None = None
    """The study synthesizer's answer (None: the deterministic synthesis stands)."""
    synthesis_note: str = Field(default="", max_length=2000)
    """Why the deterministic synthesis stands (no model, budget, no answer; empty: not said)."""



class CloseCycleInput(Model):
    """Input of the ``close_cycle`` activity: the study's state and how its cycle ended."""

    state: StudyState
    result: ResearchResult
    """The cycle's run result; its report's results JSON has every task's detail."""
    plan: Plan | None = None
    """The plan the study gave the cycle (a run's report carries only a plan it made)."""
    skills_queue: str = Pool.SKILLS.value
    """The queue of the learner whose learning from the cycle's tasks is awaited (bounded)
    before the study goes on, so the next cycle's planner recalls what the last one taught."""


class ResolveReuseInput(Model):
    """Input of ``resolve_reuse``: what a cycle's plan reuses, and the earlier reports."""

    refs: list[str] = Field(max_length=200)
    """``c<cycle>.<task_id>`` references (``Decision.reuse``)."""
    reports: dict[int, str] = Field(default_factory=dict[int, str])
    """Each earlier cycle's results JSON, by cycle."""
    digests: dict[int, str] = Field(default_factory=dict[int, str])
    """The same reports' digests in the artifact store, by cycle (read where a path is not
    on the worker's host)."""


class SynthesisRequest(AgentRequest):
    """Input of ``synthesize_study``: the study's record as it ends (its tree concluded)."""

    state: StudyState
    status: StudyStatus
    reason: str = Field(default="", max_length=2000)
    """How the study ended."""


class SynthesisAnswer(RoleAnswer):
    """Result of ``synthesize_study``: the study synthesizer's answer."""

    synthesis: StudySynthesis
