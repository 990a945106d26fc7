"""Events name the execution of their run that wrote them.

``temporal workflow reset`` starts a new execution of a run (same workflow id, new run id),
which writes its events again. Each event now names its execution (Temporal's run id of the
run's workflow), so a run's events are counted and shown per execution; the workflows make
an event's id from its execution, so ids stay unique and the key stays ``id``. Additive: rows
written before keep an empty execution, and a worker of the release before (still serving
the runs pinned to it while a new one migrates) writes as it did.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Add ``execution_events.execution`` (empty for the rows already there)."""
    op.add_column("execution_events",
                  sa.Column("execution", sa.Text, nullable=False, server_default=""))


def downgrade() -> None:
    """Drop the column; the events stay."""
    op.drop_column("execution_events", "execution")
