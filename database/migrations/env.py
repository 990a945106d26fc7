"""How Alembic runs Assay's revisions: on the connection, and in the transaction, it is given.

:mod:`database.migrations` opens the connection, takes the schema lock and puts the
connection in the config's attributes; there is no URL to read and no second connection.
"""

from __future__ import annotations

from alembic import context

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("Assay's migrations run on a connection Assay opens: use `assay migrate`")
context.configure(connection=connection)
with context.begin_transaction():
    context.run_migrations()
