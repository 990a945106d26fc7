"""Skills pools sharing one Qdrant collection: what several workers see when a server is set.

Each "worker" is a ``SkillLibrary`` with a store of its own on one PostgreSQL database and a
``SkillIndex`` over one collection reached through qdrant-client (local mode standing in for
the server, as two worker processes would share it).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from qdrant_client import QdrantClient

from activities.vectors import ClientIndex
from skills.builtin import builtin_skills
from skills.index import COLLECTION, LAYOUT, SkillIndex
from skills.library import SkillLibrary
from skills.store import SkillStore
from tests.skills.test_skill_library import MEANS, goal, means_skill, retrieved_ids

pytestmark = pytest.mark.integration


@pytest.fixture
def server() -> QdrantClient:
    return QdrantClient(location=":memory:")


def shared(server: QdrantClient) -> SkillIndex:
    return SkillIndex(ClientIndex(server, COLLECTION, LAYOUT))


@pytest.fixture
async def stores(fresh_database_url: str) -> AsyncIterator[tuple[SkillStore, SkillStore]]:
    """Two workers' stores on one database, the library seeded with the built-in skills."""
    async with SkillStore(fresh_database_url) as first, SkillStore(fresh_database_url) as second:
        await first.seed(builtin_skills(), by="assay")
        await first.add(means_skill(), by="test")
        yield first, second


def worker(store: SkillStore, index: SkillIndex) -> SkillLibrary:
    return SkillLibrary(store, lambda: index, can_import=lambda _: True)


async def test_two_workers_starting_together_index_the_library_once(
        stores: tuple[SkillStore, SkillStore], server: QdrantClient) -> None:
    rows = await stores[0].list()
    first, second = worker(stores[0], shared(server)), worker(stores[1], shared(server))
    answers = await asyncio.gather(first.match_skills(goal()),
                                   second.match_skills(goal(run_id="run-2")))
    assert [[a.use.skill_id for a in answer.applications] for answer in answers] == [
        [f"{MEANS}@v1"], [f"{MEANS}@v1"]]
    assert shared(server).ids() == {s.skill_id for s in rows} and len(shared(server)) == len(rows)
    restarted = worker(stores[1], shared(server))  # indexes every row again, from revision 0
    await restarted.match_skills(goal(run_id="run-3"))
    assert len(shared(server)) == len(rows)  # the same points, not copies


async def test_what_one_worker_indexes_the_other_reads_without_indexing(
        stores: tuple[SkillStore, SkillStore], server: QdrantClient) -> None:
    first = worker(stores[0], shared(server))
    await first.match_skills(goal())
    reader = shared(server)  # a second worker's index: it has indexed nothing itself
    first_hit, *_ = reader.search([goal().goal or ""], threshold=0.3)
    assert first_hit.skill_id == f"{MEANS}@v1"
    await stores[1].set_status(f"{MEANS}@v1", "retired", by="ada", note="obsolete")
    await first.match_skills(goal(run_id="run-2"))  # the first worker applies the change
    assert f"{MEANS}@v1" not in reader.ids()


async def test_a_point_from_an_older_view_cannot_apply_a_retired_skill(
        stores: tuple[SkillStore, SkillStore], server: QdrantClient) -> None:
    index = shared(server)
    library = worker(stores[0], index)
    active = await stores[0].get(f"{MEANS}@v1")
    await stores[1].set_status(f"{MEANS}@v1", "retired", by="ada", note="obsolete")
    await library.match_skills(goal())  # synced: the retired skill's point is gone
    index.upsert([active])  # a slower worker writes what it read before the retirement
    answer = await library.match_skills(goal(run_id="run-2"))
    assert f"{MEANS}@v1" not in retrieved_ids(answer)
    assert f"{MEANS}@v1" not in [a.use.skill_id for a in answer.applications]
