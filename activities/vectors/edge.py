"""The in-process back-end: a Qdrant Edge shard in a directory.

The real Qdrant engine, linked into this process, with no server: what the embedded stack
uses. A shard is one collection and admits one process (it locks its directory).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import qdrant_edge as qe

from activities.vectors.points import Found, Layout, Point, Query, Sparse, Vector

_CONFIG = "edge_config.json"


def _config(layout: Layout) -> qe.EdgeConfig:
    return qe.EdgeConfig(
        vectors={name: qe.EdgeVectorParams(size=size, distance=qe.Distance.Cosine)
                 for name, size in layout.dense.items()},
        sparse_vectors={name: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf if idf
                                                        else None)
                        for name, idf in layout.sparse.items()})


def _open(path: Path, layout: Layout) -> qe.EdgeShard:
    try:
        if (path / _CONFIG).exists():
            return qe.EdgeShard.load(str(path), _config(layout))
        shard = qe.EdgeShard.create(str(path), _config(layout))
        for key in layout.keywords:
            shard.update(qe.UpdateOperation.create_field_index(key, qe.PayloadSchemaType.Keyword))
        return shard
    except Exception as err:
        held = "WouldBlock" in str(err)
        hint = ("it is open in another index or process; close that one first" if held
                else "remove the directory to rebuild the index")
        raise RuntimeError(f"the vector index at {path} cannot be opened ({err}): {hint}") from err


def _vector(vector: Vector) -> list[float] | qe.SparseVector:
    return qe.SparseVector(vector.indices, vector.values) if isinstance(vector, Sparse) else vector


def _dense(vector: Any, names: Sequence[str]) -> dict[str, list[float]]:
    return {name: list(vector[name]) for name in names} if vector else {}


def _filter(where: Mapping[str, Sequence[str]] | None) -> qe.Filter | None:
    if where is None:
        return None
    return qe.Filter(must=[qe.FieldCondition(key=key, match=qe.MatchAny(list(values)))
                           for key, values in where.items()])


def _request(query: Query) -> qe.QueryRequest:
    payload = query.payload if isinstance(query.payload, bool) else list(query.payload)
    common: dict[str, Any] = {"limit": query.limit, "filter": _filter(query.where),
                              "with_payload": payload, "with_vector": list(query.vectors)}
    searches = [qe.Query.Nearest(_vector(vector), using=name) for name, vector in query.nearest]
    if len(searches) == 1:
        return qe.QueryRequest(query=searches[0], **common)
    return qe.QueryRequest(
        # the stub types Fusion.Rrf as a class nested in Fusion rather than a Fusion
        query=qe.Fusion.Rrf(k=query.rrf_k),  # pyright: ignore[reportArgumentType]
        prefetches=[qe.Prefetch(limit=query.limit, query=s) for s in searches], **common)


class EdgeIndex:
    """One collection in a Qdrant Edge shard at ``path`` (created empty when absent).

    Raises:
        RuntimeError: the directory is held by another index or process, or unreadable.
    """

    def __init__(self, path: Path, layout: Layout) -> None:
        self.path = path
        self.layout = layout
        self._shard: qe.EdgeShard | None = _open(path, layout)

    @property
    def where(self) -> str:
        """The shard's directory."""
        return str(self.path)

    @property
    def shard(self) -> qe.EdgeShard:
        """The open shard.

        Raises:
            RuntimeError: the index was closed.
        """
        if self._shard is None:
            raise RuntimeError(f"the vector index at {self.path} is closed")
        return self._shard

    def upsert(self, points: Sequence[Point]) -> None:
        """Write ``points``, replacing any point of the same id."""
        if points:
            self.shard.update(qe.UpdateOperation.upsert_points([qe.Point(
                p.id, {name: _vector(v) for name, v in p.vectors.items()}, dict(p.payload))
                for p in points]))

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the points of these ids; unknown ids are ignored."""
        if ids:
            self.shard.update(qe.UpdateOperation.delete_points(list(ids)))

    def count(self) -> int:
        """How many points the shard holds."""
        return self.shard.count(qe.CountRequest(exact=True))

    def retrieve(self, ids: Sequence[str], *, payload: Sequence[str] | bool = True,
                 vectors: Sequence[str] = ()) -> list[Found]:
        """The points of these ids that exist."""
        records = self.shard.retrieve(
            list(ids), with_payload=payload if isinstance(payload, bool) else list(payload),
            with_vector=list(vectors))
        return [Found(str(r.id), 0.0, r.payload or {}, _dense(r.vector, vectors))
                for r in records]

    def scroll(self, *, payload: Sequence[str] | bool = True) -> list[Found]:
        """Every point of the shard, with the payload asked for."""
        records, _ = self.shard.scroll(qe.ScrollRequest(
            limit=self.count() + 1,
            with_payload=payload if isinstance(payload, bool) else list(payload)))
        return [Found(str(r.id), 0.0, r.payload or {}, {}) for r in records]

    def query(self, queries: Sequence[Query]) -> list[list[Found]]:
        """The answers of a batch of queries, planned together by the engine."""
        if not queries:
            return []
        results = self.shard.query_batch(qe.QueryBatchRequest([_request(q) for q in queries]))
        return [[Found(str(p.id), p.score, p.payload or {}, _dense(p.vector, q.vectors))
                 for p in points] for q, points in zip(queries, results, strict=True)]

    def close(self) -> None:
        """Flush and close the shard (a second close does nothing)."""
        if self._shard is not None:
            self._shard.flush()
            self._shard.close()
            self._shard = None

    def __enter__(self) -> EdgeIndex:
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
