"""The ``execution_events`` table and the shape events are read back in.

Kept apart from :mod:`activities.events.store` so the table definition (columns, indexes)
can be read at a glance and imported by anything that queries events without pulling in the
store itself.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import BigInteger, Column, DateTime, Identity, Index, Integer, Text, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from workflows.contracts.execution import EventRecord


class ExecutionEventRow(SQLModel, table=True):
    """One stored ExecutionEvent: every ``EventRecord`` field plus ``seq`` and ``recorded_at``.

    ``id`` is the writer's deterministic id, so ``ON CONFLICT (id) DO NOTHING`` makes a
    retried write a no-op; workflows make it from the event's ``execution`` (the run's
    Temporal run id: a reset run's new execution writes events of its own, never taken for
    the first one's). ``seq`` is the insertion order live watchers page by.
    """

    __tablename__ = "execution_events"  # pyright: ignore[reportAssignmentType]
    __table_args__ = (
        Index("ix_execution_events_run_seq", "run_id", "seq"),
        Index("ix_execution_events_run_node_order", "run_id", "node_id", "execution_order"),
        Index("ix_execution_events_parent", "parent_event_id"),
    )

    id: str = Field(sa_column=Column(Text, primary_key=True))
    execution: str = Field(
        default="", sa_column=Column(Text, nullable=False, server_default="")
    )
    seq: int | None = Field(
        default=None, sa_column=Column(BigInteger, Identity(), nullable=False)
    )
    run_id: str = Field(sa_column=Column(Text, nullable=False))
    node_id: str = Field(sa_column=Column(Text, nullable=False))
    event_type: str = Field(sa_column=Column(Text, nullable=False))
    event_subtype: str = Field(sa_column=Column(Text, nullable=False))
    agent_name: str = Field(sa_column=Column(Text, nullable=False))
    timestamp: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    duration_ms: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    execution_order: int = Field(sa_column=Column(BigInteger, nullable=False))
    depth: int = Field(sa_column=Column(Integer, nullable=False))
    status: str = Field(sa_column=Column(Text, nullable=False))
    inputs: dict[str, Any] = Field(
        default_factory=dict[str, Any], sa_column=Column(JSONB, nullable=False)
    )
    outputs: dict[str, Any] = Field(
        default_factory=dict[str, Any], sa_column=Column(JSONB, nullable=False)
    )
    meta: dict[str, Any] = Field(
        default_factory=dict[str, Any], sa_column=Column(JSONB, nullable=False)
    )
    parent_event_id: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    recorded_at: datetime | None = Field(
        default=None,
        sa_column=Column(DateTime(timezone=True), nullable=False, server_default=func.now()),
    )


EVENTS = SQLModel.metadata.tables["execution_events"]
"""The SQLAlchemy ``Table`` behind :class:`ExecutionEventRow`, for Core statements."""

EVENT_COLUMNS: tuple[str, ...] = tuple(EventRecord.model_fields)
"""Columns written from an ``EventRecord``; ``seq`` and ``recorded_at`` come from the database."""


class StoredEvent(BaseModel):
    """An event as read back: its position in the table plus the record that was written."""

    seq: int
    recorded_at: datetime
    event: EventRecord
