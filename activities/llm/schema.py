"""The budget ledger's tables: one row per run, one per model call's reservation.

Kept apart from :mod:`activities.llm.ledger` so the columns can be read at a glance. A run's
row holds its caps and two running sums: ``spent`` (what settled calls cost) and ``reserved``
(what calls in flight may still cost). A reservation row is keyed by its call (workflow,
run, activity, attempt, round), so a repeated reserve or settle of the same call is a no-op.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Column, DateTime, Double, Index, Integer, Text
from sqlmodel import Field, SQLModel

RESERVED = "reserved"
SETTLED = "settled"
RELEASED = "released"
"""A reservation's states: in flight, replaced by its call's real usage, or given back."""


class BudgetLedgerRow(SQLModel, table=True):
    """A run's budget: its caps (None: no cap), what it spent and what is reserved."""

    __tablename__ = "budget_ledgers"  # pyright: ignore[reportAssignmentType]

    run_id: str = Field(sa_column=Column(Text, primary_key=True))
    cap_tokens: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    cap_usd: float | None = Field(default=None, sa_column=Column(Double, nullable=True))
    spent_tokens: int = Field(sa_column=Column(BigInteger, nullable=False))
    spent_usd: float = Field(sa_column=Column(Double, nullable=False))
    reserved_tokens: int = Field(sa_column=Column(BigInteger, nullable=False))
    reserved_usd: float = Field(sa_column=Column(Double, nullable=False))
    updated_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))


class BudgetReservationRow(SQLModel, table=True):
    """One model call's reservation, and its real usage once settled."""

    __tablename__ = "budget_reservations"  # pyright: ignore[reportAssignmentType]
    __table_args__ = (
        Index("ix_budget_reservations_run_state", "run_id", "state"),
        Index("ix_budget_reservations_call", "call_key"),
    )

    key: str = Field(sa_column=Column(Text, primary_key=True))
    run_id: str = Field(sa_column=Column(Text, nullable=False))
    call_key: str = Field(sa_column=Column(Text, nullable=False))
    """The activity the call runs in (workflow, run, activity id): its attempts share it."""
    attempt: int = Field(sa_column=Column(Integer, nullable=False))
    tokens: int = Field(sa_column=Column(BigInteger, nullable=False))
    usd: float = Field(sa_column=Column(Double, nullable=False))
    state: str = Field(sa_column=Column(Text, nullable=False))
    actual_tokens: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    actual_usd: float | None = Field(default=None, sa_column=Column(Double, nullable=True))
    reserved_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    expires_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
