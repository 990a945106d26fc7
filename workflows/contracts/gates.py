"""What a person's decision at a gate is, and how a gate stands or was settled.

A :class:`GateDecision` is the payload of the ``approve`` signal and the ``decide`` update;
a :class:`GateRecord` is what queries, provenance and the ledger show of a gate. How a
workflow opens, bounds and settles its gates is :mod:`workflows.common.gates`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from workflows.contracts.alternatives import BranchSpec, FieldPath
from workflows.contracts.base import (
    BY_CHARS,
    COMMENT_CHARS,
    Channel,
    Decided,
    Model,
    PlainText,
    StrictModel,
)
from workflows.contracts.plan import Scalar
from workflows.contracts.policy import GateKind

DECISION_MAX_BYTES = 32_000
"""The largest gate decision a workflow reads (compact UTF-8 JSON); a larger one is refused
unread. No valid decision comes near it: with every character escaped (``\\u0001``, six
bytes) a full ``by``, ``task_id`` and ``comment`` make under 26 000 bytes."""
REFUSALS_KEPT = 20
"""Refused decisions a gate keeps, the latest ones (``refused_count`` counts them all)."""
REFUSAL_CHARS = 400
"""The longest refusal (who, then why) a gate keeps."""
REFUSAL_EVENTS = 20
"""Refusals per gate recorded one by one as events; later ones are only counted."""


class GateDecision(StrictModel):
    """The payload of the ``approve`` signal / ``decide`` update.

    ``temporal workflow signal --name approve --input '{"gate": "plan", "decision":
    "approve", "by": "ada"}'`` sends one.
    """

    gate: GateKind
    task_id: str | None = Field(default=None, max_length=64)
    branch: str | None = Field(default=None, max_length=48)
    """The branch whose task's gate this decides (none: the run's main line)."""
    decision: Literal["approve", "reject", "modify", "branch"]
    by: PlainText = Field(min_length=1, max_length=BY_CHARS)
    comment: PlainText = Field(default="", max_length=COMMENT_CHARS)
    choice: str | None = Field(default=None, min_length=1, max_length=48)
    """At a ``branch`` gate: the line to keep (a branch's name, or ``main``); at a study's
    ``cycle`` gate: the decision instead of the rules' (``iterate``, ``fix``, ``stop`` or
    ``pivot:H``)."""
    set: dict[FieldPath, Scalar] = Field(default_factory=dict[str, Scalar], max_length=50)
    """With ``modify``: the guarded changes to the task's job, applied before it goes on."""
    branches: list[BranchSpec] = Field(default_factory=list[BranchSpec], max_length=20)
    """With ``branch`` at an ``error`` gate: branches from the failing job, instead of a
    retry (the task ends failed and the run starts them)."""
    channel: Channel | None = None
    """How it was sent: ``assay`` fills ``cli``, the Python client ``python``; none means
    ``temporal`` (a raw signal, as above)."""


class GateRecord(Model):
    """A gate as it stands or was settled: for queries, provenance and the ledger.

    ``by`` and ``comment`` come from a valid :class:`GateDecision`, so they are bounded;
    ``refused`` keeps the latest :data:`REFUSALS_KEPT` refusals, each cut to
    :data:`REFUSAL_CHARS` (see ``workflows.common.gates``), and ``refused_count`` counts all.
    """

    gate: GateKind
    task_id: str | None = None
    status: Literal["waiting", "approved", "rejected", "timed_out", "modified",
                    "branched"] = "waiting"
    opened_at: datetime
    decided_at: datetime | None = None
    by: str | None = None
    comment: str = ""
    question: str = ""
    refused: list[str] = Field(default_factory=list[str])
    refused_count: int = 0
    choice: str | None = None
    """The line a ``branch`` gate kept."""
    set: dict[str, Scalar] = Field(default_factory=dict[str, Scalar])
    """A ``modify`` decision's changes."""
    branches: list[BranchSpec] = Field(default_factory=list[BranchSpec])
    """A ``branch`` decision's branches."""
    channel: Channel | None = None
    """How the decision came (none: a gate settled by its policy, or before channels)."""

    def person(self) -> Decided | None:
        """Who settled the gate, when, what they said and how (None: nobody, or the policy)."""
        if self.by is None or self.status in ("waiting", "timed_out"):
            return None
        return Decided(by=self.by, at=self.decided_at, comment=self.comment,
                       channel=self.channel or "temporal")

    def decided_text(self) -> str:
        """``approved by ada via cli, 2026-11-28 09:30 UTC: "go"``, or how the policy settled it."""
        person = self.person()
        return f"{self.status} by {person.text() if person else self.by or 'nobody yet'}"
