"""What a vector index holds and answers, and the protocol both back-ends follow.

The types are plain data, free of either Qdrant library, so memory and the skill index are
written once against ``VectorIndex`` and run on the in-process engine or on a server alike.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Sparse:
    """A sparse vector: the non-zero dimensions and their values."""

    indices: list[int]
    values: list[float]


Vector = list[float] | Sparse
"""A dense vector (a list of floats) or a sparse one."""


@dataclass(frozen=True)
class Layout:
    """The vectors and filtered payload fields of one collection.

    Attributes:
        dense: name → dimensions of each dense vector (cosine distance).
        sparse: name → whether Qdrant weighs each sparse vector's dimensions by their IDF
            over the collection (what turns BM25 term weights into BM25 scores).
        keywords: payload fields that queries filter on (indexed as keywords on a server).
    """

    dense: Mapping[str, int] = field(default_factory=dict[str, int])
    sparse: Mapping[str, bool] = field(default_factory=dict[str, bool])
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True)
class Point:
    """One point: a stable id (a UUID string), its named vectors and its payload."""

    id: str
    vectors: Mapping[str, Vector]
    payload: Mapping[str, Any]


@dataclass(frozen=True)
class Query:
    """One search.

    Attributes:
        nearest: (vector name, vector) pairs; one is a plain nearest-neighbour search,
            several are fused by reciprocal rank (each one's ``limit`` candidates).
        limit: at most this many points come back.
        where: payload field → the values it may take (every field must match); ``None``:
            no filter.
        payload: payload fields returned (``True``: all of them).
        vectors: names of the dense vectors returned with each point.
        rrf_k: k of reciprocal rank fusion, ``1 / (k + rank)`` with ranks from 0.
    """

    nearest: Sequence[tuple[str, Vector]]
    limit: int
    where: Mapping[str, Sequence[str]] | None = None
    payload: Sequence[str] | bool = True
    vectors: Sequence[str] = ()
    rrf_k: int = 60


@dataclass(frozen=True)
class Found:
    """A point returned by a query (with its score) or read back (score 0)."""

    id: str
    score: float
    payload: Mapping[str, Any]
    vectors: Mapping[str, list[float]]


class VectorIndex(Protocol):
    """One collection of points, in this process or on a Qdrant server.

    Calls block; callers on an event loop run them in a thread. Every call reads or writes the
    back-end itself: an index object keeps no copy of the points.
    """

    @property
    def where(self) -> str:
        """The directory or server and collection, for messages."""
        ...

    def upsert(self, points: Sequence[Point]) -> None:
        """Write ``points``, replacing any point of the same id."""
        ...

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the points of these ids; ids it does not hold are ignored."""
        ...

    def count(self) -> int:
        """How many points the collection holds."""
        ...

    def retrieve(self, ids: Sequence[str], *, payload: Sequence[str] | bool = True,
                 vectors: Sequence[str] = ()) -> list[Found]:
        """The points of these ids that exist, in no particular order."""
        ...

    def scroll(self, *, payload: Sequence[str] | bool = True) -> list[Found]:
        """Every point of the collection, with the payload asked for."""
        ...

    def query(self, queries: Sequence[Query]) -> list[list[Found]]:
        """The answers of a batch of queries, in order, each best first."""
        ...

    def close(self) -> None:
        """Release the back-end (a second close does nothing)."""
        ...


def stable_id(namespace: str, key: str) -> str:
    """The point id of ``key`` in ``namespace``: the same UUID in every process and run.

    Writers that derive ids this way converge on one point per key, however many of them
    write it and in whatever order.
    """
    return str(uuid.uuid5(uuid.uuid5(uuid.NAMESPACE_URL, namespace), key))
