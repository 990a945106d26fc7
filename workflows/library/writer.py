"""The library workflow's use of the skill writer, when the runs it learns from have a model.

After an extraction, each new pattern's brief goes to ``write_skill`` on the agents queue the
batch's runs named (``TaskOutcome.writer_queue``), in parallel; after a maintenance pass,
each undecided pair goes to ``judge_merge``. What the writer answered is put into the store by
``revise_skills``. A writer that is missing, refuses, answers out of bounds or fails is a
miss: counted, its reason kept for the ``state`` query, and the deterministic pattern stays
as extraction or maintenance left it. Deterministic: workflow code.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol, TypeVar

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.catalogue import JUDGE_MERGE, REVISE_SKILLS, WRITE_SKILL, ActivityDecl
    from workflows.common.bounds import clip
    from workflows.contracts.policy import Queues
    from workflows.library.contracts import TaskOutcome
    from workflows.library.writing import (
        JudgeMergeRequest,
        MergeCandidate,
        MergeVerdict,
        PatternBrief,
        ReviseInput,
        WriteSkillRequest,
    )

InT = TypeVar("InT")
OutT = TypeVar("OutT")

MISS_CHARS = 400


class Caller(Protocol):
    """The workflow's way of running one activity: its answer, or None once logged."""

    async def __call__(self, decl: ActivityDecl[InT, OutT], arg: InT, *,
                       queues: Queues | None = None) -> OutT | None:
        """Run ``decl`` with ``arg``; None when it failed (the failure is logged)."""
        ...


def writer_queue(outcomes: list[TaskOutcome]) -> str | None:
    """The agents queue of the latest outcome whose run had a model, if any did."""
    return next((o.writer_queue for o in reversed(outcomes) if o.writer_queue), None)


class Writer:
    """The skill writer's calls of one library workflow, and what they came to.

    Args:
        call: the workflow's activity caller (a failure is logged and gives None).
        library: the library's workflow id (the requests' ``run_id``; no prompt shows it).
    """

    def __init__(self, call: Caller, library: str) -> None:
        self._call = call
        self._library = library
        self.stats: dict[str, Any] = {"written": 0, "judged": 0, "merged": 0, "misses": 0,
                                      "last_miss": ""}

    async def write(self, briefs: list[PatternBrief], queue: str) -> None:
        """The writer's text for each new pattern, put into the store."""
        queues = Queues(agents=queue)
        answers = await asyncio.gather(*(
            self._call(WRITE_SKILL, WriteSkillRequest(run_id=self._library, pattern=b),
                       queues=queues) for b in briefs))
        written = [a for a in answers if a is not None]
        self._missed(len(answers) - len(written), "write_skill")
        if written:
            revised = await self._call(REVISE_SKILLS, ReviseInput(writings=written))
            if revised is not None:
                self.stats["written"] += len(revised.written)

    async def judge(self, pairs: list[MergeCandidate], queue: str) -> None:
        """The merge judge's verdict on each undecided pair; the agreed ones merged."""
        queues = Queues(agents=queue)
        answers = await asyncio.gather(*(
            self._call(JUDGE_MERGE, JudgeMergeRequest(run_id=self._library, pair=p),
                       queues=queues) for p in pairs))
        judged = [a for a in answers if a is not None]
        self._missed(len(answers) - len(judged), "judge_merge")
        self.stats["judged"] += len(judged)
        verdicts = [MergeVerdict(first=a.first, second=a.second,
                                 description=a.judgement.description,
                                 applicability=a.judgement.applicability,
                                 reason=a.judgement.reason)
                    for a in judged if a.judgement.merge]
        if verdicts:
            revised = await self._call(REVISE_SKILLS, ReviseInput(merges=verdicts))
            if revised is not None:
                self.stats["merged"] += len(revised.merged)

    def _missed(self, count: int, name: str) -> None:
        if count:
            self.stats["misses"] += count
            self.stats["last_miss"] = clip(f"{name}: {count} call(s) gave no answer; the "
                                           "deterministic text stands", MISS_CHARS)
