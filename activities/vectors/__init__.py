"""Vector indexes: one small interface over Qdrant for memory and the skill library.

``points`` says what an index holds and answers (``Point``, ``Query``, ``Found``, the
collection's ``Layout``) and the ``VectorIndex`` protocol: upsert, query with a payload
filter and a limit, retrieve, delete, count. Two back-ends speak it: ``edge.EdgeIndex``, the
Qdrant engine in this process over a directory (qdrant-edge; the embedded stack's default,
one process per directory), and ``client.ClientIndex``, a collection reached through
``qdrant_client.QdrantClient``: a Qdrant server (``ASSAY_QDRANT_URL``), which every worker
reads and writes directly so no worker holds a copy of its own, or qdrant-client's local
mode (a directory or ``":memory:"``), which speaks the same API in one process.
"""

from activities.vectors.client import ClientIndex
from activities.vectors.edge import EdgeIndex
from activities.vectors.points import (
    Found,
    Layout,
    Point,
    Query,
    Sparse,
    Vector,
    VectorIndex,
    stable_id,
)

__all__ = ["ClientIndex", "EdgeIndex", "Found", "Layout", "Point", "Query", "Sparse", "Vector",
           "VectorIndex", "stable_id"]
