"""Baseline: the event, memory and skill library tables as Assay kept them before migrations.

The tables themselves are in :mod:`database.migrations.baseline`, which also adopts a
database made before migrations existed.

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

from alembic import op

from database.migrations.baseline import create_schema, drop_schema

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create every table, index, sequence and append-only guard of the baseline."""
    create_schema(op.get_bind(), missing_only=False)


def downgrade() -> None:
    """Drop them all, rows included."""
    drop_schema(op.get_bind())
