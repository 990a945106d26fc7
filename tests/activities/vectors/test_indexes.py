"""Both vector back-ends through one interface, and a collection shared by several workers.

The shared back-end is exercised through qdrant-client's local mode, which speaks a Qdrant
server's API in one process; there is no Qdrant server here. Local mode locks its directory
to one process (the last test shows it), so the "workers" that share a collection are two
index objects over one client, as two worker processes would share one server.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from activities.vectors import (
    ClientIndex,
    EdgeIndex,
    Found,
    Layout,
    Point,
    Query,
    Sparse,
    VectorIndex,
    stable_id,
)
from activities.vectors.client import PAGE

LAYOUT = Layout(dense={"dense": 3}, sparse={"words": False}, keywords=("status",))
COLLECTION = "things"


def point(key: str, dense: list[float], words: dict[int, float], status: str) -> Point:
    return Point(stable_id("things", key), {"dense": dense, "words": Sparse(
        sorted(words), [words[i] for i in sorted(words)])}, {"key": key, "status": status})


POINTS = [point("a", [1, 0, 0], {1: 1.0}, "active"),
          point("b", [0.9, 0.1, 0], {1: 0.5, 2: 0.5}, "retired"),
          point("c", [0.1, 1, 0], {2: 1.0}, "active"),
          point("d", [0, 0, 1], {3: 1.0}, "trial")]


@pytest.fixture(params=["edge", "client"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorIndex]:
    """An empty collection in the in-process engine, or through qdrant-client."""
    opened: VectorIndex = (EdgeIndex(tmp_path / "shard", LAYOUT) if request.param == "edge"
                           else ClientIndex(QdrantClient(location=":memory:"), COLLECTION, LAYOUT))
    yield opened
    opened.close()


def keys(found: list[Found]) -> list[str]:
    return [str(f.payload["key"]) for f in found]


def test_upserts_replace_by_id_and_deletes_ignore_unknown_ids(index: VectorIndex) -> None:
    index.upsert(POINTS)
    index.upsert([point("a", [1, 0, 0], {1: 1.0}, "retired")])  # the same key again
    assert index.count() == 4
    (a,) = index.retrieve([stable_id("things", "a")], vectors=["dense"])
    assert a.payload["status"] == "retired" and a.vectors["dense"] == pytest.approx([1, 0, 0])
    index.delete([stable_id("things", "b"), stable_id("things", "never")])
    index.delete([])
    index.upsert([])
    assert index.count() == 3
    assert sorted(keys(index.scroll(payload=["key"]))) == ["a", "c", "d"]


def test_a_query_filters_on_the_payload_and_keeps_to_its_limit(index: VectorIndex) -> None:
    index.upsert(POINTS)
    near_a = ("dense", [1.0, 0.0, 0.0])
    (everything, active, two) = index.query([
        Query(nearest=[near_a], limit=10),
        Query(nearest=[near_a], limit=10, where={"status": ["active", "trial"]}),
        Query(nearest=[near_a], limit=2)])
    assert keys(everything)[:2] == ["a", "b"] and len(everything) == 4
    assert keys(active)[0] == "a" and set(keys(active)) == {"a", "c", "d"}
    assert keys(two) == ["a", "b"]
    assert keys(everything) == ["a", "b", "c", "d"]
    assert everything[0].score == pytest.approx(1.0) and everything[1].score < 1.0


def test_a_sparse_query_scores_by_dot_product(index: VectorIndex) -> None:
    index.upsert(POINTS)
    (found,) = index.query([Query(nearest=[("words", Sparse([2], [1.0]))], limit=10,
                                  vectors=["dense"])])
    assert keys(found) == ["c", "b"]
    assert [f.score for f in found] == pytest.approx([1.0, 0.5])
    assert found[0].vectors["dense"] == pytest.approx([0.0995, 0.995, 0], abs=1e-3)  # unit


def test_both_back_ends_fuse_dense_and_sparse_ranks_alike(tmp_path: Path) -> None:
    """A hybrid query: 1 / (k + rank) summed over the rankings, ranks from 0, on either."""
    hybrid = Query(nearest=[("dense", [1.0, 0.0, 0.0]), ("words", Sparse([2], [1.0]))],
                   limit=10, rrf_k=60)
    answers: list[list[tuple[str, float]]] = []
    for index in (EdgeIndex(tmp_path / "shard", LAYOUT),
                  ClientIndex(QdrantClient(location=":memory:"), COLLECTION, LAYOUT)):
        index.upsert(POINTS)
        (found,) = index.query([hybrid])
        answers.append([(str(f.payload["key"]), f.score) for f in found])
        index.close()
    edge, client = answers
    assert dict(edge) == pytest.approx(dict(client))
    assert [key for key, _ in edge] == [key for key, _ in client] == ["c", "b", "a", "d"]
    scores = dict(edge)
    assert scores["c"] == pytest.approx(1 / 62 + 1 / 60)  # third by meaning, first by words
    assert scores["b"] == pytest.approx(1 / 61 + 1 / 61)  # second by meaning and by words
    assert scores["a"] == pytest.approx(1 / 60)  # first by meaning, no shared word


def test_two_workers_on_one_collection_see_each_others_writes() -> None:
    server = QdrantClient(location=":memory:")
    first, second = (ClientIndex(server, COLLECTION, LAYOUT) for _ in range(2))
    ready = [threading.Thread(target=i.ensure) for i in (first, second)]
    for thread in ready:
        thread.start()
    for thread in ready:
        thread.join()
    first.upsert(POINTS[:2])
    second.upsert(POINTS[1:])  # b written by both: still one point
    assert first.count() == second.count() == 4
    second.delete([stable_id("things", "a")])
    (found,) = first.query([Query(nearest=[("dense", [1.0, 0.0, 0.0])], limit=10)])
    assert "a" not in keys(found) and first.count() == 3


def threads_writing(indexes: list[ClientIndex], each: int) -> list[BaseException]:
    """Every index writes ``each`` points of its own, one at a time, all in threads at once;
    what any thread raised."""
    failures: list[BaseException] = []
    start = threading.Barrier(len(indexes))

    def write(n: int, index: ClientIndex) -> None:
        start.wait()
        try:
            for i in range(each):
                index.upsert([point(f"w{n}-{i}", [1, n, i], {n: 1.0}, "active")])
        except BaseException as err:  # handed to the test to assert on
            failures.append(err)

    threads = [threading.Thread(target=write, args=(n, i)) for n, i in enumerate(indexes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures


def test_workers_writing_through_one_local_client_at_once_lose_nothing() -> None:
    server = QdrantClient(location=":memory:")
    indexes = [ClientIndex(server, COLLECTION, LAYOUT) for _ in range(4)]
    indexes[0].ensure()
    assert threads_writing(indexes, 150) == []
    assert indexes[1].count() == 600


def test_a_worker_that_loses_the_race_to_create_uses_the_winners_collection(
        monkeypatch: pytest.MonkeyPatch) -> None:
    server = QdrantClient(location=":memory:")
    exists = server.collection_exists
    looked: list[bool] = []

    def first_look_too_early(name: str) -> bool:
        """The late worker's first look comes before the winner creates the collection."""
        looked.append(exists(name))
        return len(looked) > 1 and looked[-1]

    ClientIndex(server, COLLECTION, LAYOUT).upsert(POINTS)  # the winner
    monkeypatch.setattr(server, "collection_exists", first_look_too_early)
    assert ClientIndex(server, COLLECTION, LAYOUT).count() == 4  # its create failed: exists
    assert looked == [True, True]
    broken = ClientIndex(QdrantClient(location=":memory:"), COLLECTION,
                         Layout(dense={"dense": 0}))
    with pytest.raises(Exception, match=r"(?i)size|dimension|greater"):
        broken.count()  # a creation that fails for itself is the error, not a lost race


def test_scroll_reads_every_page() -> None:
    index = ClientIndex(QdrantClient(location=":memory:"), COLLECTION, LAYOUT)
    many = [point(f"p{i}", [1, 0, 0], {1: 1.0}, "active") for i in range(PAGE * 2 + 5)]
    index.upsert(many)
    assert sorted(keys(index.scroll(payload=["key"]))) == sorted(f"p{i}" for i in
                                                                 range(PAGE * 2 + 5))


def test_stable_ids_are_uuids_of_namespace_and_key() -> None:
    assert stable_id("things", "a") == stable_id("things", "a")
    assert len({stable_id("things", "a"), stable_id("things", "b"),
                stable_id("other", "a")}) == 3
    assert uuid.UUID(stable_id("things", "a")).version == 5


def test_an_edge_directory_admits_one_index_and_says_so(tmp_path: Path) -> None:
    with EdgeIndex(tmp_path / "shard", LAYOUT) as first:
        first.upsert(POINTS)
        with pytest.raises(RuntimeError, match="open in another index or process"):
            EdgeIndex(tmp_path / "shard", LAYOUT)
    with EdgeIndex(tmp_path / "shard", LAYOUT) as again:
        assert again.count() == 4
    with pytest.raises(RuntimeError, match="is closed"):
        again.count()


@pytest.mark.integration
def test_local_mode_admits_one_process_so_workers_need_a_server(tmp_path: Path) -> None:
    """Why the shared tests use one client: a second process cannot open the directory."""
    held = QdrantClient(path=str(tmp_path / "qdrant"))
    script = (f"from qdrant_client import QdrantClient\n"
              f"QdrantClient(path={str(tmp_path / 'qdrant')!r})\n")
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=120, check=False)
    held.close()
    assert other.returncode != 0 and "already accessed by another instance" in other.stderr
