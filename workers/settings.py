"""Assay's settings: the only place that reads the environment (prefix ``ASSAY_``)."""

from __future__ import annotations

import getpass
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from platformdirs import user_data_dir
from pydantic import (
    AliasChoices,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from workflows.contracts.environments import NAME_PATTERN
from workflows.contracts.policy import Tiering
from workflows.contracts.pools import Pool

if TYPE_CHECKING:
    from activities.artifacts.store import ArtifactStore
    from activities.environments import Environments


class Settings(BaseSettings):
    """Configuration for the CLI, workers and embedded stack.

    Every field can be set as ``ASSAY_<FIELD>`` (e.g. ``ASSAY_TEMPORAL_ADDRESS``). Empty
    service URLs mean "use the embedded service in the data directory".
    """

    model_config = SettingsConfigDict(env_prefix="ASSAY_", env_file=None, extra="ignore",
                                      populate_by_name=True)

    data_dir: Path = Field(default_factory=lambda: Path(user_data_dir("assay")))
    """Where the stack keeps everything: ``ASSAY_DATA_DIR`` made absolute, else the user's data
    home (``~/.local/share/assay`` on Linux), the same from any working directory."""
    temporal_address: str = "127.0.0.1:7233"
    """The Temporal frontend (``host:port``) the CLI and every worker connect to."""
    temporal_namespace: str = "default"
    """The Temporal namespace runs, tasks and studies live in."""
    temporal_ui_port: int = 8233
    """The port of the embedded stack's Temporal Web UI."""
    temporal_metrics_port: int | None = None
    """A port for the embedded Temporal dev server's own Prometheus metrics (unset: none)."""
    temporal_tls: bool = False
    """Speak TLS to Temporal with the system's CA roots; implied by any ``temporal_tls_*``
    setting and by an API key."""
    temporal_tls_cert: Path | None = None
    """The client certificate (PEM) for mutual TLS; needs ``temporal_tls_key``."""
    temporal_tls_key: Path | None = None
    """The client certificate's private key (PEM)."""
    temporal_tls_ca: Path | None = None
    """The CA (PEM) that signed the server's certificate (default: the system's roots)."""
    temporal_tls_server_name: str | None = Field(default=None, min_length=1, max_length=253)
    """The name the server's certificate must carry, when it is not the address's host."""
    temporal_api_key: SecretStr | None = None
    """An API key (Temporal Cloud); sent as a bearer token, never part of any payload."""
    codec_keys: SecretStr | None = None
    """Keys that encrypt payloads, ``ID=BASE64`` separated by commas or new lines; the first
    encrypts, all decrypt (so an old key can stay while its payloads live)."""
    codec_key_file: Path | None = None
    """A file of payload keys, one ``ID=BASE64`` a line (``#`` comments), the first current."""
    codec_origins: list[str] | None = None
    """Web UI origins allowed to call ``assay codec-server`` (default: the embedded Web UI's,
    ``http://localhost:<temporal_ui_port>`` and ``http://127.0.0.1:<temporal_ui_port>``)."""
    temporal_ui_codec_endpoint: str | None = Field(default=None, pattern=r"^https?://")
    """Where the embedded stack's Web UI sends payloads to decode (``assay codec-server``'s
    URL, e.g. ``http://127.0.0.1:8081``)."""
    codec_token: SecretStr | None = None
    """The bearer token ``assay codec-server`` asks of whoever decodes (none: anyone who can
    reach it)."""
    database_url: SecretStr | None = None
    """PostgreSQL for events, memory, skills and budgets; unset: embedded PostgreSQL."""
    qdrant_url: str | None = None
    """A Qdrant server (``http://qdrant:6333``): memory's task types and the skill index live
    in its collections, read and written by every worker; unset, they stay in-process (local
    storage at ``qdrant_dir`` for memory, a private shard per skills worker)."""
    qdrant_path: Path | None = None
    """Qdrant's local storage for memory; default ``<data dir>/qdrant``."""
    store_path: Path | None = None
    """The local artifact store's directory; default ``<data dir>/store``."""
    store_url: str | None = None
    """The artifact store (inputs and artifacts by sha256) every pool and the CLI share:
    ``file:///path`` or unset (the local directory), or ``s3://bucket/prefix``."""
    store_endpoint_url: str | None = Field(default=None, pattern=r"^https?://")
    """An S3-compatible service's endpoint (MinIO, Ceph, moto); unset: AWS."""
    store_region: str | None = None
    """The S3 store's region."""
    store_access_key_id: SecretStr | None = None
    """S3 credentials (unset: ``AWS_*`` from the environment); never in any payload."""
    store_secret_access_key: SecretStr | None = None
    """The S3 secret key that goes with ``store_access_key_id``."""
    metrics_port: int | None = None
    """The port workers answer Prometheus on (``/metrics``) and ``/healthz``; unset: none."""
    metrics_host: str = "127.0.0.1"
    """The address the workers' metrics exporter listens on (``0.0.0.0``: every interface, for
    a Prometheus on another host)."""
    worker_versioning: bool = True
    """Workers poll as a version of a Worker Deployment (Temporal ≥ 1.28 and the dev server
    offer them); turn off for a server without Worker Deployments."""
    deployment_name: str = Field(default="assay", pattern=r"^[A-Za-z0-9_-]+$", max_length=200)
    """The Worker Deployment every worker of this installation belongs to."""
    build_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.+-]+$", max_length=200)
    """The build id workers poll with (default: package version and workflow source digest)."""
    deployment_set_current: Literal["always", "if-none", "never"] | None = None
    """When a starting worker makes its version the deployment's current one: ``always``,
    ``if-none`` (only a deployment with no current version yet), or ``never`` (an operator
    promotes versions); unset: ``always`` in the embedded stack, else ``if-none``."""

    queue_orchestration: str = Pool.ORCHESTRATION.value
    """The task queue of the orchestration pool (workflows, events, reports)."""
    queue_agents: str = Pool.AGENTS.value
    """The task queue of the agents pool (reviewers, model roles)."""
    queue_sandbox: str = Pool.SANDBOX.value
    """The task queue of the sandbox pool (jobs, verification)."""
    queue_reflection: str = Pool.REFLECTION.value
    """The task queue of the reflection pool (diagnoses, memory)."""
    queue_skills: str = Pool.SKILLS.value
    """The task queue of the skills pool (the skill library)."""

    max_parallel_tasks: int = Field(default=4, ge=1, le=64)
    """Tasks of one run that run at once, unless a run says (``--max-parallel``)."""
    max_plan_bytes: int = Field(default=1_500_000, ge=1024)
    """The largest plan (or study input) a run takes; a file over four times this is not read."""
    max_concurrent_jobs: int = Field(default=2, ge=1, le=256)
    """Jobs one sandbox worker runs at once."""
    job_output_limit_bytes: int = Field(default=64_000, ge=1024)
    """Bytes of a job's stdout and stderr kept (each)."""
    job_max_memory_mb: int = Field(default=8192, ge=16)
    """The most memory a job may ask for; the run policy's ceiling too."""
    job_max_timeout_s: float = Field(default=6 * 3600, gt=0)
    """The longest wall-clock timeout a job may ask for; the run policy's ceiling too."""
    job_max_disk_mb: int = Field(default=4096, ge=0)
    """How much one job's working directory may grow while it runs, in allocated blocks
    (0: no quota)."""
    job_max_files: int = Field(default=10_000, ge=0)
    """Files, directories and links one job may create (0: no quota). Each is walked on every
    heartbeat; ten thousand take milliseconds and leave room for any real output (many more
    belong in an archive)."""
    artifact_max_mb: int = Field(default=1024, ge=1)
    """The largest artifact the sandbox stores, by apparent size (a sparse file read back)."""
    job_max_artifacts_mb: int = Field(default=4096, ge=1)
    """All artifacts of one job together, by apparent size; never more than
    ``job_max_disk_mb`` when that is set."""
    min_free_disk_mb: int = Field(default=512, ge=0)
    """Free space the sandbox keeps on the disks of the work directory and a local artifact
    store: below it, no job starts (``DiskFull``, retried) and a running one is stopped."""
    work_retention_hours: float = Field(default=168, ge=0)
    """Working directories of finished runs are removed once older than this."""
    sandbox_isolation: str = Field(default="auto", pattern="^(auto|bwrap|rlimits)$")
    """How jobs are isolated: ``bwrap``, ``rlimits`` (limits only), ``auto`` (bwrap if usable)."""
    anthropic_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("ASSAY_ANTHROPIC_API_KEY",
                                                    "ANTHROPIC_API_KEY", "anthropic_api_key"))
    """Read only by agents workers; never part of a workflow input, result or history."""
    anthropic_base_url: str | None = None
    """Another endpoint for the Anthropic Messages API (unset: Anthropic's)."""
    model_default: str = "claude-sonnet-5"
    """Model of the roles that write (planner, coder, debuggers, the output processor and the
    study synthesizer that write a run's and a study's final answer) unless ``models`` says."""
    model_light: str = "claude-haiku-4-5"
    """Model of the roles that judge (plan reviewer, model reviewers)."""
    models: dict[str, str] = Field(default_factory=dict[str, str])
    """Model per agent role, e.g. ``ASSAY_MODELS='{"planner": "claude-opus-5"}'``; a role
    family (``reviewer``, ``debugger``) covers its members (``reviewer_ops``...)."""
    model_record_path: Path | None = None
    """The agents worker records every model exchange here when a run names no recording."""
    model_replay_path: Path | None = None
    """The agents worker answers model calls from this recording when a run names none."""
    model_timeout_s: float = Field(default=120, gt=0)
    """How long one model call may take."""
    memory_enabled: bool = True
    """Runs use reflection memory unless a run's policy or ``--no-memory`` says otherwise."""
    memory_keep_episodes: int = Field(default=100, ge=1, le=100_000)
    """Episodes kept per task type (the newest)."""
    memory_max_age_days: float = Field(default=30, gt=0)
    """Episodes older than this are pruned."""
    tiering: Tiering = "auto"
    """Runs tier their tasks light or full by label and rules (``auto``), or force one tier,
    unless a run's policy file says otherwise (``tiering:``)."""
    skills_enabled: bool = True
    """Runs use the skill library unless a run's policy or ``--no-skills`` says otherwise."""
    skills_auto_approve: float = Field(default=1.01, ge=0, le=1.01)
    """Extracted candidates with at least this confidence become active with no person
    (above 1: never; every candidate waits for ``assay skills approve``)."""
    skills_builtin: bool = True
    """Seed the library with the built-in skills of ``skills/data`` on first start."""
    guideline_tokens: int = Field(default=3000, ge=0, le=100_000)
    """Tokens of a planner's, coder's or debugger's prompt that matched guideline skills may
    take together (0: none go in)."""
    profile_bytes: int = Field(default=6000, ge=200, le=100_000)
    """UTF-8 bytes a data file's profile may take in a prompt (a longer one is cut, and says
    so)."""
    profile_scan_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    """Bytes of a CSV or TSV data file parsed for its profile (the rest: line ends counted)."""
    docs_lookups: int = Field(default=0, ge=0, le=20)
    """Documentation lookups the coder and debuggers may make per model call (the offline
    researcher, ``lookup_docs``); 0 turns it off and keeps their prompts as they were."""
    docs_dir: Path | None = None
    """The operator's local documentation folder the lookups may read (``docs:PATH``)."""
    environment_probe_ttl_s: float = Field(default=60, ge=0)
    """How long the sandbox reuses its probe of the job interpreter's packages."""
    environments_dir: Path | None = None
    """The operator's named job environments: ``<name>.txt`` requirement files."""
    package_index_url: str | None = Field(default=None, max_length=2048,
                                          pattern=r"^(https?|file)://")
    """Where job environments' packages come from (default: PyPI)."""
    wheelhouse_dir: Path | None = None
    """A local directory of wheels for job environments; alone (no index URL) it is the only
    source, so environments are made with no network."""
    environments_root: Path | None = None
    """Where provisioned job environments live; default ``<data dir>/environments``."""
    environment_timeout_s: float = Field(default=1200, gt=0)
    """How long resolving or installing one job environment may take."""
    job_environment: str = Field(default="science", pattern=NAME_PATTERN)
    """The environment of every run that names none (``ASSAY_JOB_ENVIRONMENT``): its jobs
    naming none run in it. ``base``: the worker's own interpreter, chosen on purpose."""
    user: str = Field(default_factory=getpass.getuser, min_length=1, max_length=128)
    """Who decides gates from this machine's CLI (``assay approve --by`` overrides it)."""

    @field_validator("temporal_tls_cert", "temporal_tls_key", "temporal_tls_ca",
                     "codec_key_file")
    @classmethod
    def _readable_file(cls, path: Path | None, info: ValidationInfo) -> Path | None:
        if path is None:
            return None
        path = path.expanduser()
        if not path.is_file():
            raise ValueError(f"ASSAY_{(info.field_name or '').upper()}: no file at {path}")
        return path.resolve()

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, path: Path) -> Path:
        return path.expanduser().resolve()

    @field_validator("store_url")
    @classmethod
    def _store_url(cls, url: str | None) -> str | None:
        from activities.artifacts.location import check_store_url

        return check_store_url(url) if url else None

    @model_validator(mode="after")
    def _tls_pair(self) -> Settings:
        if (self.temporal_tls_cert is None) != (self.temporal_tls_key is None):
            raise ValueError("ASSAY_TEMPORAL_TLS_CERT and ASSAY_TEMPORAL_TLS_KEY go together: "
                             "set both for mutual TLS, or neither")
        if self.codec_keys is not None and self.codec_key_file is not None:
            raise ValueError("set ASSAY_CODEC_KEYS or ASSAY_CODEC_KEY_FILE, not both")
        return self

    @property
    def temporal_uses_tls(self) -> bool:
        """Whether connections to Temporal speak TLS."""
        return (self.temporal_tls or self.temporal_api_key is not None
                or any(v is not None for v in (self.temporal_tls_cert, self.temporal_tls_ca,
                                               self.temporal_tls_server_name)))

    @cached_property
    def root(self) -> Path:
        """The data directory as an absolute path."""
        return self.data_dir.expanduser().resolve()

    @property
    def allowed_origins(self) -> list[str]:
        """``codec_origins``, else the origins of the Web UI on ``temporal_ui_port``."""
        if self.codec_origins is not None:
            return self.codec_origins
        return [f"http://{host}:{self.temporal_ui_port}" for host in ("localhost", "127.0.0.1")]

    def make_root(self) -> Path:
        """Create the data directory if it is missing: 0700, or 0711 as root.

        As root, embedded PostgreSQL runs as its own system user and sandboxed jobs as their
        own uids: each must pass through to its own private folder. Search lists nothing.
        """
        if not self.root.is_dir():
            self.root.mkdir(parents=True, exist_ok=True)
            self.root.chmod(0o711 if os.geteuid() == 0 else 0o700)
        return self.root

    @property
    def temporal_db(self) -> Path:
        """SQLite file of the embedded Temporal dev server."""
        return self.root / "temporal.db"

    @property
    def postgres_dir(self) -> Path:
        """Data directory of embedded PostgreSQL."""
        return self.root / "postgres"

    @property
    def qdrant_dir(self) -> Path:
        """Storage of Qdrant in local mode (unless ``qdrant_url`` or ``qdrant_path`` is set)."""
        return self.qdrant_path or self.root / "qdrant"

    @property
    def store_dir(self) -> Path:
        """The artifact store: ``assay run`` puts inputs there, the sandbox takes them."""
        return (self.store_path.expanduser().resolve() if self.store_path
                else self.root / "store")

    def artifact_store(self) -> ArtifactStore:
        """The artifact store ``store_url`` names (default: the local ``store_dir``)."""
        from activities.artifacts.location import store_at

        if not (self.store_url or "").startswith("s3:"):
            if self.store_dir.is_relative_to(self.root):
                self.make_root()  # the store would otherwise create it open to all
            return store_at(self.store_url, default_dir=self.store_dir)
        from activities.artifacts.s3 import S3Options  # the S3 client only where it is used

        options = S3Options(endpoint_url=self.store_endpoint_url, region=self.store_region,
                            access_key_id=self.store_access_key_id,
                            secret_access_key=self.store_secret_access_key)
        return store_at(self.store_url, default_dir=self.store_dir, options=options)

    @property
    def provisioned_dir(self) -> Path:
        """Provisioned job environments (one directory per digest) and their caches."""
        return (self.environments_root.expanduser().resolve() if self.environments_root
                else self.root / "environments")

    def environments(self) -> Environments:
        """This host's job environments, as these settings configure them."""
        from activities.environments import Catalog, Environments, Sources

        return Environments(self.provisioned_dir, catalog=Catalog(self.environments_dir),
                            sources=Sources(self.package_index_url, self.wheelhouse_dir),
                            timeout_s=self.environment_timeout_s)

    @property
    def work_dir(self) -> Path:
        """Sandbox working directories, one per task attempt."""
        return self.root / "work"

    @property
    def runs_dir(self) -> Path:
        """Reports, one folder per run."""
        return self.root / "runs"

    @property
    def logs_dir(self) -> Path:
        """Logs of the embedded services."""
        return self.root / "logs"

    @staticmethod
    def describe_errors(err: ValidationError) -> str:
        """Refused settings as lines naming each variable (``ASSAY_<FIELD>``) and why."""
        lines: list[str] = []
        for error in err.errors():
            where = f"ASSAY_{str(error['loc'][0]).upper()}" if error["loc"] else "settings"
            message = error["msg"].removeprefix("Value error, ")
            lines.append(message if message.startswith("ASSAY_") else f"{where}: {message}")
        return "invalid settings:\n  " + "\n  ".join(lines)

    def queue(self, pool: Pool) -> str:
        """The task queue a pool listens on (overridable per pool)."""
        return str(getattr(self, f"queue_{pool.name.lower()}"))
