"""Memory keys on task kinds: old task types are kept, and moved to their kind where known.

A task's type was the first words of its action; it is now its kind, made from what its job
does (:func:`workflows.contracts.kinds.task_kind`). Every row of ``memory_episodes``,
``memory_rules`` and ``memory_templates`` keeps its old type in the new ``legacy_type``
column, so nothing learned is lost or renamed silently. Where a stored template's job tells
the kind of an old type (every template of that type has one and the same kind), the type's
templates, rules and episodes move to that kind, and so apply to new tasks at once: a
template's and a rule's body say the kind too, and a rule that matched its checksum is given
the checksum of its new body (one that did not keeps failing it). A type no job tells stays as
it was: still listed and recalled by its words, and learned again under its kind. Additive: a
worker of the release before reads and writes the tables as it did.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None

TABLES = ("memory_episodes", "memory_rules", "memory_templates")


def upgrade() -> None:
    """Add ``legacy_type`` (the old type) and move the types a template's job tells."""
    for table in TABLES:
        op.add_column(table, sa.Column("legacy_type", sa.Text, nullable=False,
                                       server_default=""))
        op.execute(f"UPDATE {table} SET legacy_type = task_type")
    _retype(op.get_bind(), kinds_of_types(op.get_bind()))


def downgrade() -> None:
    """Move every row back to its old type, then drop the column."""
    conn = op.get_bind()
    back: dict[str, str] = {}
    for table in TABLES:
        back.update((new, old) for new, old in conn.execute(sa.text(
            f"SELECT task_type, legacy_type FROM {table} "
            "WHERE legacy_type <> '' AND legacy_type <> task_type")))
    _retype(conn, back)
    for table in TABLES:
        op.drop_column(table, "legacy_type")


def kinds_of_types(conn: sa.Connection) -> dict[str, str]:
    """Old type -> kind, for the types whose templates' jobs all tell one kind."""
    from workflows.contracts.kinds import task_kind
    from workflows.contracts.plan import JobSpec

    seen: dict[str, set[str]] = defaultdict(set)
    for old, body in conn.execute(sa.text("SELECT task_type, body FROM memory_templates")):
        try:
            job = JobSpec.model_validate(body["job"])
            kind = task_kind(str(body.get("action", "")), job, body.get("input_names") or [])
        except (KeyError, TypeError, ValueError):  # not a template: its type stays
            continue
        seen[old].add(kind)
    return {old: next(iter(kinds)) for old, kinds in seen.items()
            if len(kinds) == 1 and next(iter(kinds)) != old}


def _retype(conn: sa.Connection, moves: dict[str, str]) -> None:
    """Move the rows of each old type to its new one (bodies and checksums with them)."""
    for old, new in sorted(moves.items()):
        params = {"old": old, "new": new}
        conn.execute(sa.text("UPDATE memory_episodes SET task_type = :new "
                             "WHERE task_type = :old"), params)
        conn.execute(sa.text(
            "UPDATE memory_templates SET task_type = :new, body = jsonb_set(body, "
            "'{task_type}', to_jsonb(CAST(:new AS text))) WHERE task_type = :old"), params)
        for row in conn.execute(sa.text(
                "SELECT rule_id, root_cause, sha256, body FROM memory_rules "
                "WHERE task_type = :old"), params).mappings().all():
            _move_rule(conn, dict(row), new)


def _move_rule(conn: sa.Connection, row: dict[str, Any], new: str) -> None:
    """One rule to ``new``, unless that kind has a rule for its root cause already."""
    from pydantic import ValidationError

    from activities.memory.schema import canonical, rule_checksum, rule_row
    from workflows.contracts.memory import MemoryRule

    taken = conn.execute(sa.text("SELECT 1 FROM memory_rules WHERE task_type = :new AND "
                                 "root_cause = :cause"),
                         {"new": new, "cause": row["root_cause"]}).first()
    try:
        rule = MemoryRule.model_validate(row["body"])
    except ValidationError:  # unreadable: a person repairs it where it is
        return
    if taken is not None:  # two old types became one kind: the second rule keeps its type
        return
    moved = rule.model_copy(update={"task_type": new})
    if rule.sha256 == row["sha256"] == rule_checksum(rule):
        moved, values = rule_row(moved)
        body, digest = values["body"], moved.sha256
    else:  # changed outside Assay: it moves, and still fails its checksum
        body, digest = moved.model_dump(mode="json"), row["sha256"]
    conn.execute(sa.text("UPDATE memory_rules SET task_type = :new, "
                         "body = CAST(:body AS jsonb), sha256 = :sha WHERE rule_id = :id"),
                 {"new": new, "body": canonical(body), "sha": digest, "id": row["rule_id"]})
