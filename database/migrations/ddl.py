"""DDL the table metadata cannot express: PostgreSQL itself keeping a table append-only.

Used by the revisions that create an audit trail (the memory ledger, the skill library's
events); a later revision that adds another append-only table calls it too.
"""

from __future__ import annotations


def append_only_ddl(table: str) -> tuple[str, str]:
    """Statements that make ``table`` refuse UPDATE, DELETE and TRUNCATE (idempotent).

    Each runs on its own: an audit trail that PostgreSQL itself keeps append-only.
    """
    return (
        f"""CREATE OR REPLACE FUNCTION {table}_refuse_change() RETURNS trigger
       LANGUAGE plpgsql AS $$
       BEGIN
         RAISE EXCEPTION '{table} is append-only: % refused', TG_OP
           USING ERRCODE = 'insufficient_privilege';
       END $$""",
        f"""DO $$ BEGIN
         IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '{table}'::regclass
                        AND tgname = '{table}_append_only') THEN
           CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table}
             FOR EACH ROW EXECUTE FUNCTION {table}_refuse_change();
         END IF;
         IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '{table}'::regclass
                        AND tgname = '{table}_no_truncate') THEN
           CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
             FOR EACH STATEMENT EXECUTE FUNCTION {table}_refuse_change();
         END IF;
       END $$""")
