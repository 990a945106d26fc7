"""PostgreSQL, shared by every store: the engine and its locks, row limits, the schema.

The event store and the memory store (``activities``) and the skill library's store
(``skills``) are each a :class:`~database.engine.Database`; they live in different packages,
so what they share lives below both, here: the engine's lifecycle and advisory locks
(``engine``), how big a stored value may be and how it is cut to fit (``limits``), and the
one schema, as Alembic migrations applied when a store opens (``migrations``).

Nothing is re-exported: importing a limit must not load SQLAlchemy and Alembic into the
sandbox pool or the CLI; import ``engine`` and ``migrations`` from their modules.
"""
