"""The embedded stack: Temporal dev server, PostgreSQL, Qdrant and every pool on one machine.

``launcher`` starts (or reuses) and stops it, ``serve`` supervises it, ``check`` reports its
health, ``state`` records what runs where; ``temporal``, ``embedded`` and ``qdrant`` own one
service each; ``pools`` the worker process that runs every pool (``worker_main`` is what that
process runs); ``process`` the process helpers they share.
"""


from workers.stack.check import HealthItem, check
from workers.stack.launcher import down, up

__all__ = [
    "HealthItem",
    "check",
    "down",
    "up",
]
