"""The run budget ledger: a row per run, a row per model call's reservation.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create ``budget_ledgers`` and ``budget_reservations``."""
    op.create_table(
        "budget_ledgers",
        sa.Column("run_id", sa.Text, primary_key=True),
        sa.Column("cap_tokens", sa.BigInteger, nullable=True),
        sa.Column("cap_usd", sa.Double, nullable=True),
        sa.Column("spent_tokens", sa.BigInteger, nullable=False),
        sa.Column("spent_usd", sa.Double, nullable=False),
        sa.Column("reserved_tokens", sa.BigInteger, nullable=False),
        sa.Column("reserved_usd", sa.Double, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False))
    op.create_table(
        "budget_reservations",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("run_id", sa.Text, nullable=False),
        sa.Column("call_key", sa.Text, nullable=False),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("tokens", sa.BigInteger, nullable=False),
        sa.Column("usd", sa.Double, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("actual_tokens", sa.BigInteger, nullable=True),
        sa.Column("actual_usd", sa.Double, nullable=True),
        sa.Column("reserved_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False))
    op.create_index("ix_budget_reservations_run_state", "budget_reservations",
                    ["run_id", "state"])
    op.create_index("ix_budget_reservations_call", "budget_reservations", ["call_key"])


def downgrade() -> None:
    """Drop both tables, rows included."""
    op.drop_table("budget_reservations")
    op.drop_table("budget_ledgers")
