"""Hypotheses as records: the test that decides each, its status, its evidence, its tree.

A plan proposes hypotheses (``Plan.hypotheses``) and links tasks to them
(``Decision.hypothesis``); a study keeps them in a :class:`HypothesisTree`. A hypothesis is
decided by its :class:`HypothesisTest` on *verified* metrics (``workflows.study.verdicts``),
never by a model's words, so a proposal is always ``open`` with no evidence. Depends only on
the base, so the plan contract can carry proposals. Pure models only.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from workflows.contracts.base import CheckOp, Model, PlainText, Scalar, StrictModel, TaskId
from workflows.contracts.estimates import Estimate, shown

HypothesisStatus = Literal["open", "supported", "refuted", "inconclusive"]
DECIDED: frozenset[str] = frozenset({"supported", "refuted"})
"""Statuses that settle a hypothesis (``inconclusive`` asks for another test)."""

STATEMENT_CHARS = 1000
"""The longest statement a hypothesis may have."""
MAX_HYPOTHESES = 100
"""Most hypotheses one tree (or one plan) may hold."""
MAX_EVIDENCE = 5
"""Evidence items a hypothesis keeps (the latest)."""
METRIC_CHARS = 128
"""The longest metric name, as a plan check allows."""
CONCLUDED_CHARS = 600
"""The longest account of a verdict concluded from a hypothesis's children."""


class HypothesisTest(StrictModel):
    """What decides a hypothesis: a metric test, or a reference to a plan check.

    A metric test is ``metric op threshold`` (``auc >= 0.8``) on the verified metrics of the
    tasks linked to the hypothesis, or of ``task_id`` alone when given. A metric reported
    with an interval is judged on it; ``metric`` may name the interval (``r2.ci``) or one
    of its numbers (``r2.ci_low``: see ``workflows.contracts.estimates``). A check reference
    (``check`` = the metric of one of ``task_id``'s plan checks) is resolved against the plan
    into that check's metric test. A failed plan check fails its task's verification, so a
    check reference can support a hypothesis but never refute it: write a metric test for one
    that may be refuted.
    """

    metric: str | None = Field(default=None, min_length=1, max_length=METRIC_CHARS)
    op: CheckOp | None = None
    threshold: Scalar | None = None
    check: str | None = Field(default=None, min_length=1, max_length=METRIC_CHARS)
    task_id: TaskId | None = None
    """The task whose verified metric decides (none: every task linked to the hypothesis)."""

    @model_validator(mode="after")
    def _one_kind(self) -> HypothesisTest:
        metric_parts = (self.metric, self.op, self.threshold)
        if self.check is None:
            if None in metric_parts:
                raise ValueError('a test needs "metric", "op" and "threshold", or "check" '
                                 'with "task_id"')
        elif any(part is not None for part in metric_parts):
            raise ValueError('a test is either a metric test ("metric", "op", "threshold") '
                             'or a check reference ("check"), not both')
        elif self.task_id is None:
            raise ValueError('a check reference needs the "task_id" whose check it names')
        return self

    def describe(self) -> str:
        """Human form: ``auc >= 0.8``, ``auc >= 0.8 (task 3)``, ``check auc of task 3``."""
        if self.check is not None:
            return f"check {self.check} of task {self.task_id}"
        on = f" (task {self.task_id})" if self.task_id else ""
        return f"{self.metric} {self.op} {self.threshold!r}{on}"


class Evidence(Model):
    """One verified value a verdict rests on (with its interval, when the job gave one)."""

    task_id: str
    metric: str
    value: Scalar
    cycle: int
    ci: tuple[float, float] | None = None
    level: float | None = None

    def value_text(self) -> str:
        """``0.49``, or with its interval ``0.49 [0.421, 0.55] 95 %``."""
        if self.ci is None or isinstance(self.value, str):
            return shown(self.value)
        return Estimate(value=float(self.value), ci=self.ci, level=self.level).shown()

    def shown(self) -> str:
        """``r2 = 0.49`` or ``r2 = 0.49 [0.421, 0.55] 95 %``."""
        return f"{self.metric} = {self.value_text()}"


class Hypothesis(StrictModel):
    """A falsifiable claim, the test that decides it, and what decided it."""

    id: TaskId
    parent: TaskId | None = None
    statement: PlainText = Field(min_length=1, max_length=STATEMENT_CHARS)
    test: HypothesisTest
    status: HypothesisStatus = "open"
    evidence: list[Evidence] = Field(default_factory=list[Evidence], max_length=MAX_EVIDENCE)
    decided_in: int | None = Field(default=None, ge=1)
    """The cycle whose verdict set ``status`` (none: still open)."""
    concluded: str = Field(default="", max_length=CONCLUDED_CHARS, exclude_if=lambda v: not v)
    """How the study's end concluded it from its children (``workflows.study.conclusion``);
    empty for a verdict of its own test (and left out of the dump, so digests stay)."""
    abandoned_in: int | None = Field(default=None, ge=1, exclude_if=lambda v: v is None)
    """The cycle whose escalation abandoned it (``workflows.study.escalation``): no longer
    pursued, though a later verdict may still decide it (none: not abandoned)."""

    @model_validator(mode="after")
    def _not_its_own_parent(self) -> Hypothesis:
        if self.parent == self.id:
            raise ValueError(f"hypothesis {self.id}: is its own parent")
        return self


class Verdict(Model):
    """A hypothesis's verdict in one cycle, with the reason and the values it rests on."""

    hypothesis: str
    status: HypothesisStatus
    reason: str
    evidence: list[Evidence] = Field(default_factory=list[Evidence], max_length=MAX_EVIDENCE)
    settled: bool = False
    """This verdict decided the hypothesis: supported or refuted, and it was not so before."""

    def line(self) -> str:
        """The verdict said once, with the evidence its reason gives.

        ``H1 inconclusive: the 95 % interval [0.7295, 0.7541] of cv_auc (task cv) includes
        0.75``. A reason from ``workflows.study.verdicts`` already opens with the hypothesis
        and its status, and is shown as it is; any other gets them put in front.
        """
        said = f"{self.hypothesis} {self.status}"
        if self.reason.startswith(said):
            return self.reason
        return f"{said}: {self.reason}" if self.reason else f"{said} (no reason given)"


def check_hypotheses(items: list[Hypothesis], *, known_parents: bool = True) -> None:
    """Check a set of hypotheses: count, unique ids, parents, no cycle of parents.

    Args:
        items: the hypotheses.
        known_parents: every parent must be among ``items`` (a tree). A plan's proposals
            may name parents from the study's tree instead, checked when they join it.

    Raises:
        ValueError: what is wrong and which hypothesis.
    """
    if len(items) > MAX_HYPOTHESES:
        raise ValueError(f"{len(items)} hypotheses, more than the {MAX_HYPOTHESES} allowed")
    parent_of: dict[str, str | None] = {}
    for item in items:
        if item.id in parent_of:
            raise ValueError(f"hypothesis {item.id}: duplicate id")
        parent_of[item.id] = item.parent
    for item in items:
        if known_parents and item.parent is not None and item.parent not in parent_of:
            raise ValueError(f"hypothesis {item.id}: unknown parent {item.parent!r}")
        path = [item.id]
        node = item.parent
        while node is not None and node in parent_of:
            if node in path:
                loop = [*path[path.index(node):], node]
                raise ValueError(f"hypothesis parents form a cycle: {' -> '.join(loop)}")
            path.append(node)
            node = parent_of[node]


class HypothesisTree(StrictModel):
    """A study's hypotheses: parents before children is not required, cycles are refused."""

    hypotheses: list[Hypothesis] = Field(default_factory=list[Hypothesis])

    @model_validator(mode="after")
    def _valid(self) -> HypothesisTree:
        check_hypotheses(self.hypotheses)
        return self

    def get(self, hypothesis_id: str) -> Hypothesis:
        """The hypothesis with this id.

        Raises:
            KeyError: none has it.
        """
        for item in self.hypotheses:
            if item.id == hypothesis_id:
                return item
        raise KeyError(f"no hypothesis {hypothesis_id!r} in the tree")

    def children(self, hypothesis_id: str | None) -> list[Hypothesis]:
        """The hypotheses whose parent is ``hypothesis_id`` (none: the roots), in tree order."""
        return [h for h in self.hypotheses if h.parent == hypothesis_id]

    def siblings(self, hypothesis_id: str) -> list[Hypothesis]:
        """The other hypotheses with the same parent (roots are siblings of each other)."""
        parent = self.get(hypothesis_id).parent
        return [h for h in self.children(parent) if h.id != hypothesis_id]

    def open(self) -> list[Hypothesis]:
        """Hypotheses still to be decided, in tree order: open or inconclusive, not abandoned."""
        return [h for h in self.hypotheses if h.status not in DECIDED and h.abandoned_in is None]

    def replaced(self, changed: list[Hypothesis]) -> HypothesisTree:
        """This tree with the records of ``changed`` put in place of those with their ids."""
        by_id = {h.id: h for h in changed}
        return HypothesisTree(hypotheses=[by_id.get(h.id, h) for h in self.hypotheses])
