"""The batch as cases, grouped by task kind and job file: what every later step reads.

An outcome counts once (the later of repeats), only with a verdict (a neutral status says
nothing about the job) and only with the job's source (nothing can be generalised without it).
The task type is the task's kind (:func:`workflows.contracts.kinds.task_kind`): what its job
calls, reads and reports, so only jobs that do the same thing group together, however their
actions are phrased, and the group says why (its kind's parts). The two helpers at the end
keep extraction deterministic: ties in "most common" go to the smallest, and clipped text
says that it was clipped.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from workflows.contracts.kinds import describe_kind
from workflows.contracts.patterns import MAX_NAME, slug
from workflows.contracts.plan import JobSpec, Scalar
from workflows.contracts.skills import TaskOutcome

SUCCESS = "completed"
"""The one outcome status that counts as a success."""
NEUTRAL = frozenset({"pending", "running", "blocked", "deferred", "cancelled"})
"""Statuses that say nothing about whether the job works: neither success nor failure."""
_H = TypeVar("_H", bound=Hashable)


@dataclass(frozen=True)
class Case:
    """One outcome with a resolved job."""

    outcome: TaskOutcome
    job: JobSpec
    source: str
    sha: str
    task_type: str
    grounds: str = ""
    """Why the case has its kind: the kind's parts (:meth:`TaskKind.why`)."""

    @property
    def ok(self) -> bool:
        """Whether the task succeeded."""
        return self.outcome.status == SUCCESS

    def arg(self, name: str) -> Scalar | None:
        """The job's argument ``name``, if it had one."""
        return self.job.args.get(name)


@dataclass(frozen=True)
class Group:
    """The outcomes of one task type and job file, with the same type's failures elsewhere."""

    task_type: str
    filename: str
    ok: list[Case]
    bad: list[Case]
    pool: list[Case]
    """Failures of the same task type in the whole batch (contrast for the arguments)."""

    @property
    def label(self) -> str:
        """The group as the skipped reasons name it: task type and job file."""
        return f"{self.task_type} ({self.filename or 'inline job'})"

    @property
    def grounds(self) -> str:
        """Why these outcomes were grouped: the kind they share and its parts."""
        return most_common(c.grounds for c in self.ok + self.bad)

    @property
    def ratio(self) -> float:
        """The group's share of successes."""
        return len(self.ok) / (len(self.ok) + len(self.bad))


def cases_of(outcomes: Sequence[TaskOutcome]) -> tuple[list[Case], int]:
    """The outcomes that count, by key, and how many were left out for lack of a source."""
    latest = {o.key: o for o in outcomes}
    cases: list[Case] = []
    ignored = 0
    for key in sorted(latest):
        o = latest[key]
        if o.status in NEUTRAL:
            continue
        if o.job is None or o.job.source is None:
            ignored += 1
            continue
        kind = describe_kind(o.action, o.job, o.input_names)
        cases.append(Case(o, o.job, o.job.source, sha(o.job.source), kind.kind, kind.why()))
    return cases, ignored


_FILE_NAME = re.compile(r"[\w\-./]*\w\.[A-Za-z][A-Za-z0-9]{0,7}\b")
"""A file name in an action (``sales_q1.csv``, ``data/raw.parquet``)."""


def without_data_names(action: str, names: Iterable[str] = ()) -> str:
    """``action`` with the data file names it mentions taken out.

    The task's own input names go first (they may hold spaces), then anything shaped like a
    file name: ``Profile sales_q1.csv`` and ``Profile sales_q2.csv`` are the same kind of work.
    """
    for name in sorted(set(names), key=len, reverse=True):
        if name:
            action = re.sub(re.escape(name), " ", action, flags=re.IGNORECASE)
    return _FILE_NAME.sub(" ", action)


def action_type(outcome: TaskOutcome) -> str:
    """The task type extraction groups an outcome by: its kind (its job's substance)."""
    return describe_kind(outcome.action, outcome.job, outcome.input_names).kind


def skill_name(kind: str) -> str:
    """The name of the skills of one kind: the kind as a name, with a digest of it when cut.

    ``regression.linear:sklearn|csv|r2`` -> ``regression-linear-sklearn-csv-r2``; a kind too
    long for a name keeps a 6-character digest of the whole, so two kinds that differ only
    past the cut do not share a name (and a family).
    """
    whole = "-".join(re.findall(r"[a-z0-9]+", kind.lower()))
    name = slug(kind)
    if name == whole:
        return name
    return f"{slug(kind, limit=MAX_NAME - 7)}-{sha(kind)[:6]}"


def groups_of(cases: list[Case]) -> list[Group]:
    """The cases grouped by task type and job file, in that order."""
    keyed: dict[tuple[str, str], list[Case]] = {}
    for case in cases:
        keyed.setdefault((case.task_type, case.job.filename or ""), []).append(case)
    return [Group(ttype, filename, [c for c in group if c.ok], [c for c in group if not c.ok],
                  [c for c in cases if c.task_type == ttype and not c.ok])
            for (ttype, filename), group in sorted(keyed.items())]


def sha(text: str) -> str:
    """The digest that tells one job source from another."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def most_common(items: Iterable[_H], *, order: Callable[[_H], Any] = repr) -> _H:
    """The most frequent item; ties go to the smallest by ``order`` (deterministic)."""
    counts = Counter(items)
    return min(counts, key=lambda item: (-counts[item], order(item)))


def most_common_case(cases: list[Case]) -> Case:
    """The first case (by key) of the most common job source."""
    common = most_common(c.sha for c in cases)
    return next(c for c in cases if c.sha == common)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis when cut."""
    return text if len(text) <= limit else text[:limit - 1] + "…"
