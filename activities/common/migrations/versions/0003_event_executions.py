"""Events carry the execution that wrote them: a reset run's events are its own, not doubles.

``temporal workflow reset`` starts a new execution of a run (same workflow id, new run id),
which writes its events again. Each event now names its execution (Temporal's run id of the
run's workflow), and an event id is unique per execution. Rows written before keep an empty
execution, and no row is touched otherwise.

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
    """Add ``execution_events.execution`` and key the table by (execution, id)."""
    op.add_column("execution_events",
                  sa.Column("execution", sa.Text, nullable=False, server_default=""))
    op.drop_constraint("execution_events_pkey", "execution_events", type_="primary")
    op.create_primary_key("execution_events_pkey", "execution_events", ["execution", "id"])


def downgrade() -> None:
    """Key the table by id again; of an event a reset wrote again, the first row is kept."""
    op.execute("DELETE FROM execution_events later USING execution_events first"
               " WHERE later.id = first.id AND later.seq > first.seq")
    op.drop_constraint("execution_events_pkey", "execution_events", type_="primary")
    op.create_primary_key("execution_events_pkey", "execution_events", ["id"])
    op.drop_column("execution_events", "execution")
