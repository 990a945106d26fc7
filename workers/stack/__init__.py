"""The embedded stack: Temporal dev server, PostgreSQL, Qdrant and every pool on one machine.

``launcher`` starts (or reuses) and stops it, ``serve`` supervises it, ``check`` reports its
health, ``state`` records what runs where; ``temporal``, ``embedded`` and ``qdrant`` own one
service each; ``pools`` the worker process that runs every pool (``worker_main`` is what that
process runs); ``process`` the process helpers they share. Import the module you need:
this package imports none of them, so a command that only needs ``process.StackError``
does not load the database drivers ``check`` needs.
"""
