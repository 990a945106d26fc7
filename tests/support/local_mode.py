"""Memory's task-type index as releases before the in-process engine kept and asked it.

``write_local_mode`` leaves qdrant-client's local storage as those releases left it (one point
per task type: its hashed words and ``{"task_type", "action"}``), and ``as_local_mode_answered``
is their ``TaskTypeIndex.similar``: the engine's five nearest, as it ordered and scored them.
The tests and the benchmark compare the shard against both.
"""

from __future__ import annotations

from pathlib import Path

from qdrant_client import QdrantClient

from activities.memory.index import VECTOR, TaskTypeIndex, type_point_id, word_vector
from activities.vectors import Point, Query, Sparse
from workflows.contracts.kinds import task_kind


def write_local_mode(storage: Path, actions: list[str]) -> None:
    """Local mode's storage at ``storage`` holding the task type of each action."""
    client = QdrantClient(path=str(storage))
    points: list[Point] = []
    for action in actions:
        indices, values = word_vector(action)
        points.append(Point(type_point_id(task_kind(action)), {VECTOR: Sparse(indices, values)},
                            {"task_type": task_kind(action), "action": action[:500]}))
    TaskTypeIndex.on_client(client).vectors.upsert(points)
    client.close()


def as_local_mode_answered(index: TaskTypeIndex, action: str,
                           min_score: float) -> list[tuple[str, float]]:
    """What ``similar(action, min_score=min_score)`` answered before the shard."""
    indices, values = word_vector(action)
    if not indices:
        return []
    (found,) = index.vectors.query([Query(nearest=[(VECTOR, Sparse(indices, values))],
                                          limit=5)])
    return [(str(p.payload.get("task_type", "")), round(p.score, 4))
            for p in found if p.score >= min_score and p.payload.get("task_type")]


def by_name_in_ties(answer: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """An answer with equal scores ordered by name, as the shard orders them."""
    return sorted(answer, key=lambda pair: (-pair[1], pair[0]))
