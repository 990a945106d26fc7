"""Which vector index the reflection and skills pools build, with and without a Qdrant server."""

from __future__ import annotations

import threading
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from activities.memory.index import LAYOUT, SHARD
from activities.memory.memory import Memory
from activities.vectors import ClientIndex, EdgeIndex
from tests.support.e2e import isolated_settings
from workers.pools.builders import PoolSpec, build_specs
from workflows.catalogue import CONSULT_MEMORY, MATCH_SKILLS, declaration_of
from workflows.contracts.kinds import task_kind
from workflows.contracts.memory import ConsultInput, ConsultTask
from workflows.contracts.plan import JobSpec
from workflows.contracts.pools import Pool

pytestmark = pytest.mark.integration


def owner(spec: PoolSpec, name: str) -> Any:
    """The object whose method serves the activity ``name``."""
    (fn,) = [fn for fn in spec.activities if (d := declaration_of(fn)) and d.name == name]
    return fn.__self__  # pyright: ignore[reportFunctionMemberAccess]


async def test_without_a_server_memory_uses_its_shard_and_skills_a_private_one(
        tmp_path: Path, fresh_database_url: str) -> None:
    settings = isolated_settings(tmp_path, "vectors")
    async with AsyncExitStack() as stack:
        specs = await build_specs(settings, [Pool.REFLECTION, Pool.SKILLS],
                                  database_url=fresh_database_url, stack=stack)
        memory = owner(specs[Pool.REFLECTION], CONSULT_MEMORY.name)
        library = owner(specs[Pool.SKILLS], MATCH_SKILLS.name)
        assert isinstance(memory.index.vectors, EdgeIndex)
        assert memory.index.vectors.path == settings.qdrant_dir / SHARD
        skills = library._index_factory()  # pyright: ignore[reportPrivateUsage]
        assert isinstance(skills.vectors, EdgeIndex)
        assert skills.vectors.path.parent == settings.root
        skills.close()


async def test_with_its_shard_held_memory_falls_back_to_exact_task_types(
        tmp_path: Path, fresh_database_url: str) -> None:
    settings = isolated_settings(tmp_path, "vectors")
    holder = EdgeIndex(settings.qdrant_dir / SHARD, LAYOUT)  # another process, in effect
    try:
        async with AsyncExitStack() as stack:
            specs = await build_specs(settings, [Pool.REFLECTION],
                                      database_url=fresh_database_url, stack=stack)
            memory: Memory = owner(specs[Pool.REFLECTION], CONSULT_MEMORY.name)
            assert memory.index is None
            answer = await memory.consult_memory(ConsultInput(run_id="r", tasks=[ConsultTask(
                task_id="t", action="Train the model in batches", job=JobSpec(code="1"))]))
    finally:
        holder.close()
    assert answer.advice[0].task_type == task_kind("Train the model in batches", JobSpec(code="1"))
    assert answer.advice[0].similar_to is None


# the client checks the server's version in a thread of its own and warns: no server here
@pytest.mark.filterwarnings("ignore:Failed to obtain server version:UserWarning")
async def test_with_a_server_both_pools_use_its_collections(
        tmp_path: Path, fresh_database_url: str) -> None:
    url = "http://127.0.0.1:9"  # nothing listens: the pools connect only when they search
    settings = isolated_settings(tmp_path, "vectors").model_copy(update={"qdrant_url": url})
    async with AsyncExitStack() as stack:
        specs = await build_specs(settings, [Pool.REFLECTION, Pool.SKILLS],
                                  database_url=fresh_database_url, stack=stack)
        skills = owner(specs[Pool.SKILLS], MATCH_SKILLS.name)._index_factory()
        memory = owner(specs[Pool.REFLECTION], CONSULT_MEMORY.name)
        for index in (memory.index.vectors, skills.vectors):
            assert isinstance(index, ClientIndex) and index.where.startswith(url)
        assert (memory.index.vectors.collection, skills.vectors.collection) == (
            "assay_memory_task_types", "assay_skills")
        assert not settings.qdrant_dir.exists()  # no local copy of either
    for thread in threading.enumerate():  # its warning is ignored only while this test runs
        if "_check_compatibility" in thread.name:
            thread.join(timeout=30)
