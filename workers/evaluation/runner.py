"""Running a suite: every task ``repeat`` times under each configuration, scored as it ends.

Configurations run one after another (the full one first), so what one learns reaches the
next as it would reach a user's next run; the runs of one configuration go in parallel, at
most ``parallel`` at a time. Each run is an ordinary run started and awaited through
:class:`~client.assay.AssayClient`; its sample keeps what the run's results say: status,
time, model calls, tokens, cost, and each reference part held or not.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from temporalio.service import RPCError

from activities.artifacts.store import ArtifactStore
from activities.reports.reading import result_report
from client.assay import AssayClient
from workers.evaluation.causes import failure_cause
from workers.evaluation.configurations import Configuration
from workers.evaluation.judging import judge_run
from workers.evaluation.labels import score_labels
from workers.evaluation.scoring import score
from workers.evaluation.suite import Suite, SuiteTask
from workers.evaluation.traffic import Traffic, replay_missed
from workers.intake.goalfile import load_goal
from workers.intake.planfile import load_plan
from workers.intake.runpolicy import queues_from
from workers.settings import Settings
from workflows.common.failures import root_message
from workflows.contracts.results import ResearchInput, ResearchResult


class Sample(BaseModel):
    """One run of one task under one configuration, scored."""

    task: str
    level: int
    configuration: str
    repeat: int
    run_id: str = ""
    status: str = "error"
    passed: bool = False
    seconds: float = 0.0
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    calls_by_role: dict[str, int] = Field(default_factory=dict[str, int])
    held: list[str] = Field(default_factory=list[str])
    missed: list[str] = Field(default_factory=list[str])
    answer_problems: list[str] = Field(default_factory=list[str])
    """What the run's own check found wrong with its formatted answer (its citations)."""
    judgement: dict[str, Any] | None = None
    """The hypothesis judge's facets, score and reasons (tasks with a gold hypothesis)."""
    error: str = ""
    cause: str = ""
    """Why it failed (``workers.evaluation.causes``); empty when it passed."""
    skipped: str = ""
    """Why the run is not scored: its recording had no answer for a request this
    configuration made (an ablation changes the prompts). Never the model's failure."""


class Evaluation:
    """What a suite run needs: the suite, its runs' inputs, and how to run them."""

    def __init__(self, suite: Suite, base: Path, *, settings: Settings, live: bool,
                 parallel: int = 4, timeout_s: float = 900.0,
                 echo: Callable[[str], None] = lambda _line: None,
                 traffic: Traffic | None = None) -> None:
        self.suite, self.base, self.settings = suite, base, settings
        self.live, self.parallel, self.timeout_s, self.echo = live, parallel, timeout_s, echo
        self.traffic = traffic or Traffic()
        self.store = settings.artifact_store()
        self.requests: dict[tuple[str, str], ResearchInput] = {}
        self.skipped: dict[tuple[str, str], str] = {}
        """(configuration, task) not run, and why (offline, with no recording)."""
        self.judge_record: Path | None = None
        """Where a live evaluation appends the hypothesis judge's traffic."""

    def prepare(self, configs: list[Configuration]) -> None:
        """Every run's input, checked before any run starts.

        Raises:
            PlanFileError, GoalError, PolicyError: a task's plan, goal, data or recording.
        """
        for config in configs:
            for task in self.suite.tasks:
                replay, record = self.traffic.paths(task, config, self.base, live=self.live)
                if task.goal is not None and not self.live and replay is None:
                    self.skipped[config.name, task.id] = self.traffic.why_skipped(task, config)
                    self.echo(f"{config.name:<16} {task.id:<24} skipped: "
                              f"{self.skipped[config.name, task.id]}")
                    continue
                self.requests[config.name, task.id] = self.request(task, config, replay,
                                                                   record)

    def request(self, task: SuiteTask, config: Configuration, replay: Path | None = None,
                record: Path | None = None) -> ResearchInput:
        """The run's input: the task's plan or goal under the configuration's policy."""
        policy = config.policy(self.settings, replay=replay, record=record)
        common: dict[str, Any] = {"max_bytes": self.settings.max_plan_bytes, "policy": policy,
                                  "queues": queues_from(self.settings), "store": self.store}
        if task.plan is not None:
            req = load_plan(self.base / task.plan, **common)
        else:
            req = load_goal(task.goal or "", [self.base / d for d in task.data],
                            answer_format=task.answer_format, **common)
        return req.model_copy(update={"plan_name": f"eval {task.id}"})

    async def run_configuration(self, client: AssayClient, config: Configuration,
                                repeat: int) -> list[Sample]:
        """Every task ``repeat`` times under ``config``, in parallel within the bound."""
        slots = asyncio.Semaphore(self.parallel)
        if not any(name == config.name for name, _ in [*self.requests, *self.skipped]):
            self.prepare([config])
        jobs = [self._sample(client, slots, t, config, r)
                for r in range(1, repeat + 1) for t in self.suite.tasks
                if (config.name, t.id) in self.requests]
        return [*await asyncio.gather(*jobs), *self.not_run(config)]

    def not_run(self, config: Configuration) -> list[Sample]:
        """A sample saying why, for each task ``config`` skips (not scored)."""
        return [Sample(task=t.id, level=t.level, configuration=config.name, repeat=1,
                       status="skipped", skipped=self.skipped[config.name, t.id])
                for t in self.suite.tasks if (config.name, t.id) in self.skipped]

    async def sample_one(self, client: AssayClient, task: SuiteTask,
                         config: Configuration) -> Sample:
        """One run of ``task`` under ``config``, on its own (a learning curve's step)."""
        if (config.name, task.id) not in self.requests:
            self.prepare([config])
        if (config.name, task.id) in self.skipped:
            return Sample(task=task.id, level=task.level, configuration=config.name,
                          repeat=1, status="skipped", skipped=self.skipped[config.name, task.id])
        return await self._sample(client, asyncio.Semaphore(1), task, config, 1)

    async def _sample(self, client: AssayClient, slots: asyncio.Semaphore, task: SuiteTask,
                      config: Configuration, repeat: int) -> Sample:
        sample = Sample(task=task.id, level=task.level, configuration=config.name,
                        repeat=repeat)
        req = self.requests[config.name, task.id]
        document: Any = None
        async with slots:
            try:
                sample.run_id = await client.start_run(req, again=True)
                result = await asyncio.wait_for(client.result(sample.run_id), self.timeout_s)
            except TimeoutError:
                sample.error = f"no result within {self.timeout_s:.0f} s; cancelled"
                with contextlib.suppress(RPCError):  # it may have ended meanwhile
                    await client.handle(sample.run_id).cancel()
            except Exception as err:  # a run that fails is a failed sample
                sample.error = root_message(err) if str(err) else type(err).__name__
            else:
                document = scored(sample, task, result, self.store)
                if task.hypothesis:
                    await self._judged(sample, task, document)
        sample.skipped = replay_missed(sample.error, document)
        sample.cause = "" if sample.skipped else failure_cause(
            passed=sample.passed, error=sample.error, missed=sample.missed, document=document)
        self.echo(_progress(sample))
        return sample

    async def _judged(self, sample: Sample, task: SuiteTask, document: Any) -> None:
        """The judge's verdict on a run of a task with a gold hypothesis, in its sample."""
        replay = (self.base / task.judge_replay if task.judge_replay and not self.live
                  else None)
        judged = await judge_run(self.settings, task, document, replay=replay,
                                 record=self.judge_record if self.live else None)
        (sample.held if judged.passed else sample.missed).append(judged.line)
        sample.judgement = judged.judgement
        sample.passed = not sample.missed


def scored(sample: Sample, task: SuiteTask, result: ResearchResult,
           store: ArtifactStore | None = None) -> Any:
    """Fill a sample from a finished run's result and its results JSON; return that JSON.

    ``store`` is where that JSON is read by digest when this machine lacks its path.
    """
    sample.status = result.status
    sample.seconds = (result.finished_at - result.started_at).total_seconds()
    sample.calls = result.model.calls
    sample.calls_by_role = dict(result.model.calls_by_role)
    sample.tokens = result.model.usage.total_tokens
    sample.cost_usd = result.model.usage.cost_usd
    document = results_document(result, store)
    verdicts = score(document, task.expect)
    sample.held = [v.line() for v in verdicts if v.passed]
    sample.missed = [v.line() for v in verdicts if not v.passed]
    if task.answer_format:
        labelled = score_labels(document, task.answer_format, task.labels)
        sample.held += labelled.held
        sample.missed += labelled.missed
        sample.answer_problems = labelled.problems
    sample.passed = not sample.missed
    return document


def results_document(result: ResearchResult, store: ArtifactStore | None = None) -> Any:
    """The run's results JSON as its report wrote it, else the result it returned."""
    report = result_report(result, store)
    return (report or result).model_dump(mode="json")


def _progress(sample: Sample) -> str:
    verdict = "skip" if sample.skipped else "pass" if sample.passed else "FAIL"
    why = sample.error or (sample.missed[0] if sample.missed else "")
    return (f"{sample.configuration:<16} {sample.task:<24} #{sample.repeat}  {verdict}  "
            f"{sample.status:<9} {sample.seconds:6.1f} s  {sample.calls:3d} calls"
            + (f"  ({sample.skipped or why})" if why and not sample.passed else ""))


async def run_suite(evaluation: Evaluation, client: AssayClient, configs: list[Configuration],
                    repeat: int, done: Callable[[Configuration, list[Sample]], None],
                    ) -> list[Sample]:
    """Every configuration in turn; ``done`` is told each one's samples as it ends."""
    samples: list[Sample] = []
    for config in configs:
        mine = await evaluation.run_configuration(client, config, repeat)
        done(config, mine)
        samples += mine
    return samples
