"""Worker builders, one per pool: which workflows and activities each task queue serves.

Dependencies (database URL, directories, limits) enter here, from settings, and are handed
to the activity classes; nothing else builds clients.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from temporalio.client import Client
from temporalio.common import VersioningBehavior
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig
from temporalio.worker import Worker

from workers.connection import connect
from workers.pools import codecache, collector
from workers.pools.health import watch_health
from workers.pools.runner import workflow_runner
from workers.pools.versioning import deployment_config, deployment_version, promote
from workers.settings import Settings
from workflows.catalogue import check_registrations
from workflows.contracts.base import build_models
from workflows.contracts.pools import Pool
from workflows.research.batch import TaskBatchWorkflow as Batches
from workflows.research.branch import BranchWorkflow
from workflows.research.workflow import ResearchWorkflow
from workflows.study.workflow import StudyWorkflow
from workflows.task.workflow import TaskWorkflow

if TYPE_CHECKING:
    from activities.memory.index import TaskTypeIndex
    from skills.index import SkillIndex

log = logging.getLogger("assay.workers")

SERVED_POOLS: frozenset[Pool] = frozenset(
    {Pool.ORCHESTRATION, Pool.AGENTS, Pool.SANDBOX, Pool.REFLECTION, Pool.SKILLS})
"""Pools that have workflows or activities to serve in this version; the others start no
worker (Temporal workers need something to poll for) and ``assay check`` says so."""


@dataclass
class PoolSpec:
    """What one pool's worker runs."""

    workflows: list[type] = field(default_factory=list[type])
    activities: list[Callable[..., Any]] = field(default_factory=list[Callable[..., Any]])
    max_concurrent_activities: int | None = None
    on_start: Callable[[Client], Awaitable[None]] | None = None
    """Run once the pool's worker is polling (e.g. start the skill library's workflow)."""
    versioning: VersioningBehavior = VersioningBehavior.UNSPECIFIED
    """What the pool's workflows do when a new version becomes current (worker versioning):
    stay on theirs (``PINNED``) or move (``AUTO_UPGRADE``). A worker's default, not each
    workflow's ``@workflow.defn``: a declared behaviour is refused by the server from
    unversioned workers, and so would make versioning impossible to turn off."""


async def build_specs(settings: Settings, pools: Sequence[Pool], *, database_url: str,
                      stack: AsyncExitStack) -> dict[Pool, PoolSpec]:
    """Build the activity objects each requested pool needs (opening what they open).

    Raises:
        workflows.catalogue.RegistrationError: a pool's activities are not exactly the
            catalogue's declarations for that pool.
    """
    specs: dict[Pool, PoolSpec] = {}
    if Pool.ORCHESTRATION in pools:
        from activities.common.turns import pass_turn
        from activities.events.store import EventStore
        from activities.learning.handoff import Learner
        from activities.reports.study import StudyReportWriter
        from activities.reports.writer import ReportWriter
        from activities.study.cycles import StudyCycles

        store = EventStore(database_url)
        await store.open()
        stack.push_async_callback(store.close)
        artifacts = settings.artifact_store()
        writer = ReportWriter(settings.runs_dir, artifacts, events=store)
        cycles = StudyCycles(artifacts)
        studies = StudyReportWriter(settings.root)
        specs[Pool.ORCHESTRATION] = PoolSpec(
            workflows=[ResearchWorkflow, BranchWorkflow, TaskWorkflow, StudyWorkflow, Batches],
            versioning=VersioningBehavior.PINNED,  # they wait on people for days
            activities=[store.record_events, writer.write_report, writer.write_task_report,
                        cycles.close_cycle, cycles.resolve_reuse, studies.write_study_report,
                        Learner(settings.skills_auto_approve).hand_off_outcome, pass_turn])
    if Pool.AGENTS in pools:
        specs[Pool.AGENTS] = await _agents_spec(settings, database_url, stack)
    if Pool.REFLECTION in pools:
        specs[Pool.REFLECTION] = await _reflection_spec(settings, database_url, stack)
    if Pool.SKILLS in pools:
        specs[Pool.SKILLS] = await _skills_spec(settings, database_url, stack)
    if Pool.SANDBOX in pools:
        from activities.environments.activity import EnvironmentPreparer
        from activities.evidence.relink import Relinker
        from activities.evidence.verify import EvidenceVerifier
        from activities.review.infra import InfrastructureReviewer
        from activities.sandbox.environment import EnvironmentProbe
        from activities.sandbox.job import Sandbox

        probe = EnvironmentProbe(ttl_s=settings.environment_probe_ttl_s)
        environments = settings.environments()
        artifacts = settings.artifact_store()
        sandbox = Sandbox(work_dir=settings.work_dir,
                          output_limit_bytes=settings.job_output_limit_bytes,
                          max_memory_mb=settings.job_max_memory_mb,
                          max_timeout_s=settings.job_max_timeout_s,
                          max_disk_mb=settings.job_max_disk_mb,
                          max_files=settings.job_max_files,
                          max_artifact_mb=settings.artifact_max_mb,
                          max_artifacts_mb=settings.job_max_artifacts_mb,
                          min_free_disk_mb=settings.min_free_disk_mb,
                          isolation=settings.sandbox_isolation, fingerprint=probe.fingerprint,
                          store=artifacts,
                          environments=environments)
        infra = InfrastructureReviewer(settings.work_dir, environments=environments)
        preparer = EnvironmentPreparer(environments, infra.base_versions)
        relinker = Relinker(settings.work_dir, artifacts)
        specs[Pool.SANDBOX] = PoolSpec(
            activities=[sandbox.execute_job, EvidenceVerifier(artifacts).verify_evidence,
                        infra.review_infrastructure,
                        relinker.rescan_artifacts, probe.probe_environment,
                        preparer.prepare_environment],
            max_concurrent_activities=settings.max_concurrent_jobs + 4,
            on_start=_workspace_retention(settings, stack))
    assert set(specs) == set(pools) & SERVED_POOLS, "SERVED_POOLS is out of date"
    for pool, spec in specs.items():
        check_registrations(pool, spec.activities)
    for pool in set(pools) - SERVED_POOLS:
        log.info("pool %s has no activities in this version; no worker started", pool)
    return specs


def _workspace_retention(settings: Settings,
                         stack: AsyncExitStack) -> Callable[[Client], Awaitable[None]]:
    """Start sweeping finished runs' working directories once the sandbox worker polls."""
    from activities.sandbox.retention import WorkspaceJanitor, temporal_closed_at

    retention_s = settings.work_retention_hours * 3600

    async def start(client: Client) -> None:
        janitor = WorkspaceJanitor(settings.work_dir, retention_s=retention_s,
                                   closed_at=temporal_closed_at(client))
        janitor.start(every_s=min(3600.0, max(60.0, retention_s / 4)))
        stack.push_async_callback(janitor.stop)

    return start


async def _reflection_spec(settings: Settings, database_url: str,
                           stack: AsyncExitStack) -> PoolSpec:
    """The reflection pool: diagnosis with the run's signals and memory, and memory itself.

    Reflection reads signals from the event table and keeps memory in the same database.
    """
    from activities.memory.memory import Memory
    from activities.memory.recall import Recall
    from activities.memory.store import MemoryStore
    from activities.reflection.reflection import Reflection

    store = MemoryStore(database_url)
    await store.open()
    stack.push_async_callback(store.close)
    reflection = Reflection(store, store.engine)
    index = _task_type_index(settings, stack)
    memory = Memory(store, keep=settings.memory_keep_episodes,
                    max_age_days=settings.memory_max_age_days, index=index)
    recall = Recall(store, index=index)
    return PoolSpec(activities=[reflection.diagnose_failure, memory.consult_memory,
                                memory.remember_task, memory.remember_tasks, recall.recall_memory])


async def _skills_spec(settings: Settings, database_url: str,
                       stack: AsyncExitStack) -> PoolSpec:
    """The skills pool: the library workflow and its activities over PostgreSQL and Qdrant.

    The rows are shared by every worker. With a Qdrant server (``qdrant_url``) every worker
    indexes them into one collection by stable ids and searches it there; without one, each
    process keeps its own Qdrant edge index of them in a directory of its own. Either way the
    index is brought up to date from the rows before every search.
    """
    from skills.builtin import builtin_skills
    from skills.library import SkillLibrary
    from skills.revise import SkillRevisions
    from skills.store import SkillStore
    from workflows.contracts.skills import LibraryState, library_id
    from workflows.library.workflow import SkillLibraryWorkflow

    store = SkillStore(database_url)
    await store.open()
    stack.push_async_callback(store.close)
    if settings.skills_builtin:
        seeded = await store.seed(builtin_skills(), by="assay")
        if seeded:
            log.info("skill library seeded with built-in skills: %s", ", ".join(seeded))
    library = SkillLibrary(store, _skill_index_factory(settings, stack))
    stack.callback(library.close)
    queue = settings.queue(Pool.SKILLS)

    async def start_library(client: Client) -> None:
        from temporalio.common import WorkflowIDConflictPolicy

        await client.start_workflow(
            SkillLibraryWorkflow.run, LibraryState(auto_approve=settings.skills_auto_approve),
            id=library_id(queue), task_queue=queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING)

    return PoolSpec(workflows=[SkillLibraryWorkflow],
                    activities=[library.match_skills, library.record_outcomes,
                                library.extract_skills, library.maintain_skills,
                                SkillRevisions(store).revise_skills],
                    on_start=start_library,
                    versioning=VersioningBehavior.AUTO_UPGRADE)  # lives on, continues as new


def _skill_index_factory(settings: Settings,
                         stack: AsyncExitStack) -> Callable[[], SkillIndex]:
    """How the skills pool opens its index: the server's collection, or a private shard."""
    import shutil
    import tempfile
    from pathlib import Path

    from activities.vectors import ClientIndex
    from skills.index import COLLECTION, LAYOUT, SkillIndex
    from workers.stack.qdrant import QdrantLocal

    if settings.qdrant_url:
        qdrant = QdrantLocal(settings.qdrant_dir, url=settings.qdrant_url)
        stack.callback(qdrant.close)
        return lambda: SkillIndex(ClientIndex(qdrant.open(), COLLECTION, LAYOUT))
    settings.root.mkdir(parents=True, exist_ok=True)
    where = Path(tempfile.mkdtemp(prefix="skills-index-", dir=settings.root))
    stack.callback(shutil.rmtree, where, True)
    return lambda: SkillIndex(where)


def _task_type_index(settings: Settings, stack: AsyncExitStack) -> TaskTypeIndex | None:
    """Similar task types: a server's collection, else a shard under ``qdrant_dir``, or None."""
    from activities.memory.index import TaskTypeIndex
    from workers.stack.qdrant import QdrantLocal

    qdrant = QdrantLocal(settings.qdrant_dir, url=settings.qdrant_url)
    stack.callback(qdrant.close)
    try:
        index = (TaskTypeIndex.on_client(qdrant.open()) if settings.qdrant_url
                 else TaskTypeIndex.in_directory(settings.qdrant_dir))
    except Exception as err:  # memory still works, matching exact task types only
        log.warning("memory's task-type index cannot open (%s): exact task types only", err)
        return None
    stack.callback(index.close)
    return index


async def _agents_spec(settings: Settings, database_url: str,
                       stack: AsyncExitStack) -> PoolSpec:
    """The agents pool: deterministic reviewers, the model gateway and the model roles.

    The roles share the gateway: one HTTP client, one set of open recordings, and the
    runs' budget ledger in the database. They read
    matched guideline skills from the skill library's store, and the coder and debuggers may
    look documentation up offline when ``docs_lookups`` allows.
    """
    from activities.agents.guidance import StoredGuidelines
    from activities.agents.roles import Agents
    from activities.agents.writer import SkillWriter
    from activities.environments import Catalog
    from activities.llm.gateway import ModelGateway
    from activities.llm.ledger import BudgetLedger
    from activities.profiles.stored import DataProfiles
    from activities.research.tool import DocsResearcher
    from activities.review.panel import review_ops, review_quality_safety
    from skills.store import SkillStore

    ledger = BudgetLedger(database_url)  # opens on the first call of a run with a budget
    stack.push_async_callback(ledger.close)
    artifacts = settings.artifact_store()

    gateway = ModelGateway(settings.anthropic_api_key, settings.anthropic_base_url,
                           {"default": settings.model_default, **settings.models},
                           light_model=settings.model_light,
                           record_path=settings.model_record_path,
                           replay_path=settings.model_replay_path,
                           timeout_s=settings.model_timeout_s, ledger=ledger,
                           store=artifacts, recordings_dir=settings.data_dir / "recordings")
    stack.push_async_callback(gateway.aclose)
    store = SkillStore(database_url)
    guides: StoredGuidelines | None = None
    try:
        await store.open()
    except Exception as err:  # the roles still answer, with no guideline skills
        log.warning("skill library unavailable to the agents (%s): prompts get no guidelines",
                    err)
    else:
        stack.push_async_callback(store.close)
        guides = StoredGuidelines(store)
    key = settings.anthropic_api_key
    researcher = (DocsResearcher(settings.docs_dir, limit=settings.docs_lookups,
                                 secrets=[key.get_secret_value()] if key else [])
                  if settings.docs_lookups else None)
    agents = Agents(gateway, artifacts, guides=guides,
                    guideline_tokens=settings.guideline_tokens, researcher=researcher,
                    environments=Catalog(settings.environments_dir).names(),
                    profiles=DataProfiles(artifacts, max_bytes=settings.profile_bytes,
                                          scan_bytes=settings.profile_scan_bytes))
    writer = SkillWriter(gateway)
    return PoolSpec(activities=[review_ops, review_quality_safety, gateway.call_model,
                                agents.plan_goal, agents.review_plan, agents.write_job,
                                agents.review_job_model, agents.debug_job,
                                agents.summarize_run, agents.synthesize_study, writer.write_skill,
                                writer.judge_merge, writer.reformulate_query,
                                agents.reflect_failure, agents.judge_hypothesis])


def make_runtime(settings: Settings) -> Runtime | None:
    """A Temporal runtime; its SDK's metrics are served on Assay's port (``pools.exporter``).

    Raises:
        OSError: the metrics port cannot be bound.
    """
    from activities.llm.metrics import COST_BUCKETS_USD, COST_USD
    from activities.metrics.definitions import REGISTRY
    from workers.pools.exporter import MetricsExporter, free_loopback_port

    if settings.metrics_port is None:
        return None
    sdk_port = free_loopback_port()
    exporter = MetricsExporter(settings.metrics_port, f"http://127.0.0.1:{sdk_port}/metrics",
                               REGISTRY, host=settings.metrics_host)
    try:
        return Runtime(telemetry=TelemetryConfig(metrics=PrometheusConfig(
            bind_address=f"127.0.0.1:{sdk_port}",
            histogram_bucket_overrides={COST_USD: list(COST_BUCKETS_USD)})))
    except BaseException:
        exporter.close()
        raise


async def run_pools(settings: Settings, pools: Sequence[Pool], *, database_url: str,
                    stop: asyncio.Event, client: Client | None = None) -> None:
    """Run workers for ``pools`` until ``stop`` is set, then shut them down gracefully."""
    async with AsyncExitStack() as stack:
        if client is None:
            client = await connect(settings, runtime=make_runtime(settings))
        specs = await build_specs(settings, pools, database_url=database_url, stack=stack)
        await serve_specs(client, settings, specs, stop)


async def serve_specs(client: Client, settings: Settings, specs: dict[Pool, PoolSpec],
                      stop: asyncio.Event) -> None:
    """Serve each pool's spec as the deployment version settings say, until ``stop`` is set.

    Raises:
        temporalio.service.RPCError: the version could not be made current as
            ``settings.deployment_set_current`` asks (e.g. the server lacks Worker Deployments).
    """
    codecache.install()  # the sandbox imports workflow modules for each execution
    collector.pace()  # a worker's young objects are many and short-lived
    build_models()  # contracts build their validators at first use; a worker, all at start
    version = deployment_version(settings)
    runner = workflow_runner(client.data_converter)
    workers = [
        Worker(client, task_queue=settings.queue(pool), workflows=spec.workflows,
               activities=spec.activities, workflow_runner=runner,
               max_concurrent_activities=spec.max_concurrent_activities,
               deployment_config=deployment_config(version, spec.versioning),
               # sandbox jobs get a few seconds to notice cancellation and kill their group
               graceful_shutdown_timeout=timedelta(seconds=5 if pool is Pool.SANDBOX else 2))
        for pool, spec in specs.items()
    ]
    for pool in specs:
        log.info("worker started on %s", settings.queue(pool))
    runs = [asyncio.create_task(w.run()) for w in workers]
    stop_watching = watch_health(client, [settings.queue(pool) for pool in specs], runs)
    try:
        if specs:
            await promote(client, settings)
        for pool, spec in specs.items():
            if spec.on_start is not None:
                try:
                    await spec.on_start(client)
                except Exception as err:  # the pool still serves what it can
                    log.warning("pool %s could not finish starting: %s", pool, err)
        stopper = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait([*runs, stopper], return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
    finally:
        await asyncio.gather(*(w.shutdown() for w in workers))
        await stop_watching()
    for task in done:
        if task is not stopper and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
