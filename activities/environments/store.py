"""Resolving environments to locks and provisioning them, each at most once per host.

Layout under the environments directory::

    locks/<key>.txt         resolved pins of a request (key: sha256 of the request)
    <digest>/               a provisioned environment (digest: sha256 of python + pins)
    <digest>/environment.json   its record: name, requirements, pins, created, install time
    <digest>/.last-used     touched each time the environment is provided for a job
    .uv-cache/              uv's download cache
    .locks/<digest>.lock    held while one worker installs that environment

An environment is built in a temporary directory next to its final place and renamed there
when complete, so a directory named by a digest is always whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from activities.common.trees import TreeLimitError, remove_tree, walk
from activities.environments.catalog import Catalog, normalise
from activities.environments.errors import EnvironmentProblem
from activities.environments.installer import Sources, run_uv
from workflows.contracts.environments import MAX_PINS, PreparedEnvironment

RECORD = "environment.json"
LAST_USED = ".last-used"
_MAX_FILES = 2_000_000  # files an environment's walks read; big stacks hold ~100,000
"""Touched whenever an environment is provided for a job: ``assay envs prune`` reads it."""


@dataclass(frozen=True)
class Spec:
    """What an environment is asked to hold: a name and normalised, sorted requirements."""

    name: str
    requirements: tuple[str, ...]
    added: tuple[str, ...] = ()
    """The requirements beyond the named set's own (not part of the environment's identity)."""


@dataclass(frozen=True)
class Lock:
    """A resolved environment: exact ``name==version`` pins and its digest."""

    spec: Spec
    python: str
    pins: tuple[str, ...]

    @property
    def digest(self) -> str:
        """sha256 of the Python version and the pins: the environment's identity."""
        text = "\n".join([f"python=={self.python}", *self.pins])
        return hashlib.sha256(text.encode()).hexdigest()

    def versions(self) -> dict[str, str]:
        """Package name -> resolved version."""
        return dict(pin.split("==", 1) for pin in self.pins)  # type: ignore[misc]


class Environments:
    """The environments of one host.

    Args:
        root: the environments directory.
        catalog: the named sets.
        python: the interpreter environments are made from (the job interpreter).
        sources: where packages come from.
        timeout_s: how long one resolution or installation may take.
    """

    def __init__(self, root: Path, *, catalog: Catalog | None = None,
                 python: str = sys.executable, sources: Sources | None = None,
                 timeout_s: float = 1200.0) -> None:
        self.root = root.expanduser().resolve()
        self.catalog = catalog or Catalog()
        self.python = python
        self.sources = sources or Sources()
        self.installs = 0
        """Installations this instance has run (a cache hit runs none)."""
        self._timeout_s = timeout_s
        self._python_version: str | None = None

    @property
    def python_version(self) -> str:
        """``3.11.7``: the version of the job interpreter."""
        if self._python_version is None and self.python == sys.executable:
            self._python_version = platform.python_version()  # no subprocess for our own
        if self._python_version is None:
            self._python_version = subprocess.run(
                [self.python, "-I", "-c", "import platform; print(platform.python_version())"],
                capture_output=True, text=True, check=True, timeout=30).stdout.strip()
        return self._python_version

    def spec(self, name: str | None, requirements: list[str]) -> Spec:
        """The named set (if any) plus ``requirements``, normalised and sorted.

        Raises:
            EnvironmentProblem: an unknown name or a malformed requirement.
        """
        wanted = [*(self.catalog.requirements(name) if name else []), *requirements]
        normalised = tuple(sorted({normalise(r) for r in wanted}))
        return Spec(name=name or "custom", requirements=normalised,
                    added=tuple(self.catalog.added(name, list(normalised))))

    async def resolve(self, spec: Spec) -> Lock:
        """Exact pins for ``spec``, from the lock cache or the index (``uv pip compile``)."""
        key = self._key(spec)
        cached = self.root / "locks" / f"{key}.txt"
        if cached.is_file():
            return self._lock(spec, cached.read_text(encoding="utf-8"))
        out = await run_uv(
            ["pip", "compile", "-", "--python", self.python, "--no-build", "--no-header",
             "--no-annotate", "--quiet", *self.sources.args()],
            cache_dir=self.cache_dir, sources=self.sources, timeout_s=self._timeout_s,
            stdin="\n".join(spec.requirements).encode())
        lock = self._lock(spec, out)
        cached.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(cached, "\n".join(lock.pins) + "\n")
        return lock

    def installed(self, digest: str) -> Path | None:
        """The provisioned environment with ``digest`` on this host, if complete."""
        path = self.root / digest
        return path if len(digest) == 64 and (path / RECORD).is_file() else None

    def interpreter(self, path: Path) -> str:
        """The interpreter of a provisioned environment."""
        return str(path / "bin" / "python")

    async def provision(self, lock: Lock) -> PreparedEnvironment:
        """The environment of ``lock``, installed once on this host (a file lock guards it)."""
        digest = lock.digest
        if (found := self.installed(digest)) is not None:
            self.mark_used(digest)
            return _prepared(self.read_record(found), lock.spec, reused=True)
        with open(self.lock_path(digest), "w") as guard:
            await asyncio.to_thread(fcntl.flock, guard, fcntl.LOCK_EX)
            try:
                if (found := self.installed(digest)) is not None:
                    prepared = _prepared(self.read_record(found), lock.spec, reused=True)
                else:
                    prepared = _prepared(await self._install(lock), lock.spec, reused=False)
            finally:
                fcntl.flock(guard, fcntl.LOCK_UN)
        self.mark_used(digest)
        return prepared

    def lock_path(self, digest: str) -> Path:
        """The file lock held while ``digest`` is installed (or removed)."""
        (self.root / ".locks").mkdir(parents=True, exist_ok=True)
        return self.root / ".locks" / f"{digest}.lock"

    def mark_used(self, digest: str) -> None:
        """Record that the environment was provided for a job now (best effort)."""
        with contextlib.suppress(OSError):
            (self.root / digest / LAST_USED).touch()

    async def ensure(self, prepared: PreparedEnvironment) -> Path:
        """The directory of a prepared environment on this host, provisioning it if absent.

        Raises:
            EnvironmentProblem: the record does not match its digest or this interpreter.
        """
        if (found := self.installed(prepared.digest)) is not None:
            self.mark_used(prepared.digest)
            return found
        spec = Spec(name=prepared.name, requirements=tuple(prepared.requirements))
        lock = Lock(spec=spec, python=prepared.python, pins=tuple(prepared.pins))
        if lock.digest != prepared.digest or prepared.python != self.python_version:
            raise EnvironmentProblem("install_failed", f"environment {prepared.label()} was "
                                     f"prepared for Python {prepared.python} with other pins; "
                                     f"this worker runs Python {self.python_version}")
        await self.provision(lock)
        return self.root / lock.digest

    async def prepare(self, name: str | None, requirements: list[str]) -> PreparedEnvironment:
        """Resolve and provision: what ``prepare_environment`` and ``assay envs`` do."""
        return await self.provision(await self.resolve(self.spec(name, requirements)))

    def read_record(self, path: Path) -> dict[str, Any]:
        """The ``environment.json`` of a provisioned environment."""
        record: dict[str, Any] = json.loads((path / RECORD).read_text(encoding="utf-8"))
        return record

    def records(self) -> list[dict[str, Any]]:
        """Every provisioned environment's record, newest first, with its size in bytes."""
        found: list[dict[str, Any]] = []
        if not self.root.is_dir():
            return found
        for path in self.root.iterdir():
            if self.installed(path.name) is not None:
                record = self.read_record(path)
                record["size"] = _size(path)
                record["path"] = str(path)
                with contextlib.suppress(OSError):
                    used = (path / LAST_USED).stat().st_mtime
                    record["last_used"] = datetime.fromtimestamp(used, UTC).isoformat(
                        timespec="seconds")
                found.append(record)
        return sorted(found, key=lambda r: str(r.get("created", "")), reverse=True)

    @property
    def cache_dir(self) -> Path:
        """Uv's download cache."""
        return self.root / ".uv-cache"

    async def _install(self, lock: Lock) -> dict[str, Any]:
        self.root.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        staging = Path(tempfile.mkdtemp(prefix=f".staging-{lock.digest[:12]}-", dir=self.root))
        try:
            await self._uv(["venv", str(staging), "--python", self.python, "--relocatable",
                            "--quiet", "--no-project"])
            await self._uv(["pip", "install", "--python", str(staging / "bin" / "python"),
                            "--no-build", "--no-deps", "--quiet", "--link-mode", "copy",
                            "-r", "-", *self.sources.args()],
                           stdin="\n".join(lock.pins).encode())
            record = {"name": lock.spec.name, "requirements": list(lock.spec.requirements),
                      "python": lock.python, "pins": list(lock.pins), "digest": lock.digest,
                      "created": datetime.now(UTC).isoformat(timespec="seconds"),
                      "install_s": round(time.monotonic() - started, 2)}
            (staging / RECORD).write_text(json.dumps(record, indent=2), encoding="utf-8")
            await asyncio.to_thread(_readable, staging)
            os.rename(staging, self.root / lock.digest)
            self.installs += 1
            return record
        finally:
            with contextlib.suppress(OSError):
                remove_tree(staging)

    async def _uv(self, args: list[str], *, stdin: bytes | None = None) -> str:
        return await run_uv(args, cache_dir=self.cache_dir, sources=self.sources,
                            timeout_s=self._timeout_s, stdin=stdin)

    def _key(self, spec: Spec) -> str:
        text = "\n".join([f"python=={self.python_version}", self.sources.canonical(),
                          *spec.requirements])
        return hashlib.sha256(text.encode()).hexdigest()

    def _lock(self, spec: Spec, text: str) -> Lock:
        pins = tuple(sorted(line.strip() for line in text.splitlines()
                            if line.strip() and not line.lstrip().startswith("#")))
        if len(pins) > MAX_PINS:
            raise EnvironmentProblem("install_failed", f"the environment resolves to "
                                     f"{len(pins)} packages, more than {MAX_PINS}")
        return Lock(spec=spec, python=self.python_version, pins=pins)


def _prepared(record: dict[str, Any], spec: Spec, *, reused: bool) -> PreparedEnvironment:
    """The record's environment; ``added`` only when it was made under the name asked for."""
    same = str(record["name"]) == spec.name
    return PreparedEnvironment(
        added=list(spec.added) if same else [], name=str(record["name"]),
        digest=str(record["digest"]), python=str(record["python"]),
        pins=[str(p) for p in record["pins"]][:MAX_PINS],
        requirements=[str(r) for r in record["requirements"]],
        install_s=float(record.get("install_s", 0.0)), reused=reused)


def _readable(root: Path) -> None:
    """Let a job's uid read every file and enter every directory (a too deep tree: refused)."""
    os.chmod(root, 0o755)
    try:
        for found in walk(root, max_entries=_MAX_FILES):
            if found.is_dir():
                os.chmod(found.entry.path, 0o755)
            elif not found.entry.is_symlink():
                os.chmod(found.entry.path, found.entry.stat().st_mode | 0o444)
    except TreeLimitError as err:
        raise EnvironmentProblem("install_failed", f"the installed packages are refused: {err}"
                                 ) from err


def _write_atomic(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def _size(path: Path) -> int:
    total = 0
    with contextlib.suppress(TreeLimitError, OSError):
        for found in walk(path, max_entries=_MAX_FILES):
            total += found.entry.stat(follow_symlinks=False).st_size
    return total
