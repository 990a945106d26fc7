"""Memory's task-type shard, and the one-time carry-over of an index kept in local mode.

Earlier releases kept the task types in qdrant-client's local mode, a directory at
``Settings.qdrant_dir`` holding the collection ``index.COLLECTION``. That collection is the
only record of which action each rule's task type was learned from (PostgreSQL keeps the
rules, not the wording they were indexed by), so it is carried over rather than rebuilt:
the first open of the shard copies every point, ids, vectors and payloads as stored, into a
shard built beside it and moved into place once complete. A copy that fails leaves no shard,
and the next open tries again; the old storage is read, never changed.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, cast

from activities.memory.index import COLLECTION, LAYOUT, VECTOR, type_point
from activities.vectors import EdgeIndex, Point, Sparse
from activities.vectors.locks import lock_holder

_CONFIG = "edge_config.json"
_PAGE = 256


def opened(shard: Path, legacy: Path) -> EdgeIndex:
    """The shard at ``shard``, made from ``legacy``'s collection when it is first opened.

    Args:
        shard: the shard's directory.
        legacy: qdrant-client's local storage that may hold ``COLLECTION``.

    Raises:
        RuntimeError: the shard is held by another process, or ``legacy`` cannot be read.
    """
    shard.parent.mkdir(parents=True, exist_ok=True)
    if (shard / _CONFIG).exists() or not (legacy / "collection" / COLLECTION).is_dir():
        return EdgeIndex(shard, LAYOUT)
    points = legacy_points(legacy)
    staging = shard.with_name(f"{shard.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    with EdgeIndex(staging, LAYOUT) as fresh:
        fresh.upsert(points)
    if shard.exists() and not any(shard.iterdir()):
        shard.rmdir()
    staging.rename(shard)
    return EdgeIndex(shard, LAYOUT)


def legacy_points(legacy: Path) -> list[Point]:
    """Every point of ``COLLECTION`` in the local storage at ``legacy``, vectors as stored.

    Raises:
        RuntimeError: another process holds the storage, or it cannot be read.
    """
    from qdrant_client import QdrantClient  # a second to import: only to carry over

    where = legacy / "collection" / COLLECTION
    locked, pid = lock_holder(legacy)
    if locked:
        raise RuntimeError(f"memory's task types in {where} cannot be carried over: "
                           f"{'another process' if pid is None else f'pid {pid}'} holds "
                           f"{legacy}; stop it, and the next start carries them over")
    try:
        client = QdrantClient(path=str(legacy))
        try:
            records = _scrolled(client)
        finally:
            client.close()
    except Exception as err:  # held by another process (local mode admits one), or damaged
        raise RuntimeError(
            f"memory's task types in {where} cannot be read ({err}): if it is damaged, "
            f"remove {where} to start an empty index; the next start tries again") from err
    return [_carried(record) for record in records]


def _scrolled(client: Any) -> list[Any]:
    """Every record of ``COLLECTION``, with its vectors, page by page."""
    records: list[Any] = []
    offset: Any = None
    while True:
        page, offset = client.scroll(COLLECTION, limit=_PAGE, offset=offset,
                                     with_payload=True, with_vectors=True)
        records.extend(page)
        if offset is None:
            return records


def _carried(record: Any) -> Point:
    """A stored record as a point of the shard: same id, vector and payload.

    The payload also keeps the vector at full precision, as ``type_point`` does.
    """
    stored = cast(dict[str, Any], record.vector)[VECTOR]
    payload = dict(record.payload or {})
    point = type_point(str(payload.get("task_type", "")), str(payload.get("action", "")),
                       Sparse(list(stored.indices), list(stored.values)))
    return Point(str(record.id), point.vectors, {**payload, **point.payload})
