"""The shared back-end: one collection reached through ``qdrant_client.QdrantClient``.

Against a Qdrant server (``QdrantClient(url=...)``, ``ASSAY_QDRANT_URL``) every worker reads
and writes the same collection, so they all answer alike; writers use stable point ids
(``stable_id``), so two of them indexing the same thing at once leave one point. The same
class runs over qdrant-client's local mode (a directory or ``":memory:"``), which speaks the
server's API in one process: the embedded stack's memory and the tests use it. Local mode is
not safe across threads, so every index over one local client takes that client's lock
(``guard``); a server's client is used without one.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from activities.vectors.points import Found, Layout, Point, Query, Sparse, Vector

if TYPE_CHECKING:
    from qdrant_client import QdrantClient, models

PAGE = 256
"""Points read per scroll request."""

_LOCAL_LOCKS: weakref.WeakKeyDictionary[Any, threading.RLock] = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()


def guard(client: Any) -> contextlib.AbstractContextManager[Any]:
    """What to hold while calling ``client``.

    In local mode, the client's one lock (an in-process collection that two threads must
    not write at once); for a server's client, nothing.
    """
    init = getattr(client, "init_options", {})
    if not (init.get("path") or init.get("location") == ":memory:"):
        return contextlib.nullcontext()
    with _LOCKS_LOCK:
        return _LOCAL_LOCKS.setdefault(client, threading.RLock())


def _vector(vector: Vector) -> list[float] | models.SparseVector:
    from qdrant_client import models

    if isinstance(vector, Sparse):
        return models.SparseVector(indices=vector.indices, values=vector.values)
    return vector


def _dense(vector: Any, names: Sequence[str]) -> dict[str, list[float]]:
    if not isinstance(vector, dict):
        return {}
    named = cast(dict[str, list[float]], vector)
    return {name: list(named[name]) for name in names}


def _filter(where: Mapping[str, Sequence[str]] | None) -> models.Filter | None:
    from qdrant_client import models

    if where is None:
        return None
    return models.Filter(must=[models.FieldCondition(key=key, match=models.MatchAny(
        any=list(values))) for key, values in where.items()])


def _request(query: Query) -> models.QueryRequest:
    from qdrant_client import models

    payload = query.payload if isinstance(query.payload, bool) else list(query.payload)
    searches = [(name, _vector(vector)) for name, vector in query.nearest]
    common: dict[str, Any] = {"limit": query.limit, "filter": _filter(query.where),
                              "with_payload": payload, "with_vector": list(query.vectors)}
    if len(searches) == 1:
        (name, vector), = searches
        return models.QueryRequest(query=vector, using=name, **common)
    return models.QueryRequest(
        query=models.RrfQuery(rrf=models.Rrf(k=query.rrf_k)),
        prefetch=[models.Prefetch(query=vector, using=name, limit=query.limit)
                  for name, vector in searches], **common)


class ClientIndex:
    """One collection of a Qdrant server (or of qdrant-client's local mode).

    The collection is created with ``layout`` on first use if it does not exist; a worker
    that loses the race to create it uses the one the other created.

    Args:
        client: an open client; its owner closes it.
        collection: the collection's name.
        layout: its vectors and filtered payload fields.
    """

    def __init__(self, client: QdrantClient, collection: str, layout: Layout) -> None:
        self.client = client
        self.collection = collection
        self.layout = layout
        self._ready = False
        self._lock = threading.Lock()
        self._guard = guard(client)

    @property
    def where(self) -> str:
        """The client's server (or local storage) and the collection."""
        init = getattr(self.client, "init_options", {})
        place = init.get("url") or init.get("location") or init.get("path") or "qdrant"
        return f"{place} collection {self.collection}"

    def ensure(self) -> None:
        """Create the collection (and its keyword indexes) unless it exists."""
        with self._lock, self._guard:
            if self._ready:
                return
            if not self.client.collection_exists(self.collection):
                try:
                    self._create()
                except Exception:
                    if not self.client.collection_exists(self.collection):
                        raise  # not a lost race: the creation itself failed
            self._ready = True

    def _create(self) -> None:
        from qdrant_client import models

        self.client.create_collection(
            self.collection,
            vectors_config={name: models.VectorParams(size=size, distance=models.Distance.COSINE)
                            for name, size in self.layout.dense.items()},
            sparse_vectors_config={name: models.SparseVectorParams(
                modifier=models.Modifier.IDF if idf else None)
                for name, idf in self.layout.sparse.items()})
        with warnings.catch_warnings():  # local mode has no payload indexes and says so
            warnings.filterwarnings("ignore", "Payload indexes have no effect", UserWarning)
            for key in self.layout.keywords:
                self.client.create_payload_index(self.collection, key,
                                                 models.PayloadSchemaType.KEYWORD)

    def upsert(self, points: Sequence[Point]) -> None:
        """Write ``points`` (waiting until the server has applied them)."""
        from qdrant_client import models

        if not points:
            return
        self.ensure()
        structs = [models.PointStruct(id=p.id, payload=dict(p.payload), vector={
            name: _vector(v) for name, v in p.vectors.items()}) for p in points]
        with self._guard:
            self.client.upsert(self.collection, wait=True, points=structs)

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the points of these ids; unknown ids are ignored."""
        from qdrant_client import models

        if ids:
            self.ensure()
            with self._guard:
                self.client.delete(self.collection, wait=True,
                                   points_selector=models.PointIdsList(points=list(ids)))

    def count(self) -> int:
        """How many points the collection holds."""
        self.ensure()
        with self._guard:
            return self.client.count(self.collection, exact=True).count

    def retrieve(self, ids: Sequence[str], *, payload: Sequence[str] | bool = True,
                 vectors: Sequence[str] = ()) -> list[Found]:
        """The points of these ids that exist."""
        self.ensure()
        with self._guard:
            records = self.client.retrieve(
                self.collection, list(ids), with_vectors=list(vectors) or False,
                with_payload=payload if isinstance(payload, bool) else list(payload))
        return [Found(str(r.id), 0.0, r.payload or {}, _dense(r.vector, vectors))
                for r in records]

    def scroll(self, *, payload: Sequence[str] | bool = True) -> list[Found]:
        """Every point of the collection, a page at a time."""
        self.ensure()
        out: list[Found] = []
        offset: Any = None
        while True:
            with self._guard:
                records, offset = self.client.scroll(
                    self.collection, limit=PAGE, offset=offset,
                    with_payload=payload if isinstance(payload, bool) else list(payload))
            out.extend(Found(str(r.id), 0.0, r.payload or {}, {}) for r in records)
            if offset is None:
                return out

    def query(self, queries: Sequence[Query]) -> list[list[Found]]:
        """The answers of a batch of queries, in one request."""
        if not queries:
            return []
        self.ensure()
        with self._guard:
            results = self.client.query_batch_points(self.collection,
                                                     [_request(q) for q in queries])
        return [[Found(str(p.id), p.score, p.payload or {}, _dense(p.vector, q.vectors))
                 for p in result.points] for q, result in zip(queries, results, strict=True)]

    def close(self) -> None:
        """Nothing to release: the client belongs to whoever opened it."""
