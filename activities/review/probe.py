"""Asking the job interpreter which modules and distributions it has, cheaply.

One subprocess of the interpreter answers for every name at once, and answers are kept for a
short while, so a plan of a hundred tasks importing numpy spawns one probe, not a hundred.
Concurrent reviews share one probe in flight instead of racing to start their own.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from temporalio.exceptions import ApplicationError

from workflows.contracts.errors import ErrorType

PROBE_SCRIPT = r"""
import importlib.metadata as md, importlib.util, json, re, sys
request = json.load(sys.stdin)
try:
    owners = md.packages_distributions()
except Exception:
    owners = {}
def version(name):
    canonical = re.sub(r"[-_.]+", "-", name).lower()
    for candidate in (name, canonical, canonical.replace("-", "_")):
        try:
            return md.version(candidate)
        except md.PackageNotFoundError:
            pass
    return None
modules = {}
for name in request["modules"]:
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    dists = {d: version(d) for d in owners.get(name, [])} if found else {}
    modules[name] = {"found": found, "dists": dists}
json.dump({"python": sys.version.split()[0], "modules": modules,
           "distributions": {n: version(n) for n in request["distributions"]}}, sys.stdout)
"""


@dataclass(frozen=True)
class ModuleStatus:
    """Whether a top-level module can be imported, and which distributions provide it."""

    found: bool
    dists: dict[str, str | None] = field(default_factory=dict[str, "str | None"])


@dataclass(frozen=True)
class ProbeResult:
    """What the job interpreter said about the names asked for."""

    python_version: str
    modules: dict[str, ModuleStatus]
    distributions: dict[str, str | None]


class Prober:
    """Probes one interpreter, caching each answer for ``ttl_s`` seconds.

    Args:
        python: the job interpreter.
        timeout_s: how long one probe may take.
        ttl_s: how long an answer stays fresh.
        clock: monotonic time source (tests pass their own).
    """

    def __init__(self, python: str, *, timeout_s: float = 30.0, ttl_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.python = python
        self.runs = 0
        """Probe subprocesses started so far."""
        self._timeout_s = timeout_s
        self._ttl_s = ttl_s
        self._clock = clock
        self._lock = asyncio.Lock()
        self._version: tuple[float, str] | None = None
        self._modules: dict[str, tuple[float, ModuleStatus]] = {}
        self._dists: dict[str, tuple[float, str | None]] = {}

    def _fresh(self, stamp: float) -> bool:
        return self._clock() - stamp < self._ttl_s

    async def probe(self, modules: Iterable[str], distributions: Iterable[str]) -> ProbeResult:
        """Status of every module and installed version of every distribution asked for."""
        modules, distributions = sorted(set(modules)), sorted(set(distributions))
        async with self._lock:
            stale_modules = [m for m in modules
                             if m not in self._modules or not self._fresh(self._modules[m][0])]
            stale_dists = [d for d in distributions
                           if d not in self._dists or not self._fresh(self._dists[d][0])]
            if stale_modules or stale_dists or self._version is None or not self._fresh(
                    self._version[0]):
                self._store(await self._run(stale_modules, stale_dists))
            assert self._version is not None
            return ProbeResult(python_version=self._version[1],
                               modules={m: self._modules[m][1] for m in modules},
                               distributions={d: self._dists[d][1] for d in distributions})

    def _store(self, answer: dict[str, Any]) -> None:
        now = self._clock()
        self._version = (now, str(answer.get("python", "?")))
        for name, raw in cast("dict[str, dict[str, Any]]", answer.get("modules", {})).items():
            dists = cast("dict[str, str | None]", raw.get("dists") or {})
            self._modules[name] = (now, ModuleStatus(found=bool(raw.get("found")), dists=dists))
        for name, version in cast("dict[str, str | None]",
                                  answer.get("distributions", {})).items():
            self._dists[name] = (now, version)

    async def _run(self, modules: list[str], distributions: list[str]) -> dict[str, Any]:
        """One probe subprocess for every name at once."""
        self.runs += 1
        payload = json.dumps({"modules": modules, "distributions": distributions}).encode()
        return await ask_interpreter(self.python, PROBE_SCRIPT, payload,
                                     timeout_s=self._timeout_s, what="the package probe")


async def ask_interpreter(python: str, script: str, payload: bytes | None, *, timeout_s: float,
                          what: str) -> dict[str, Any]:
    """Run ``script`` in the job interpreter and read the JSON object it prints.

    Isolated (``-I``) like a job: no user site, no PYTHON* variables, a minimal environment.
    ``payload`` goes to its stdin. Failures are ``ApplicationError``s naming ``what`` ran.
    """
    try:
        proc = await asyncio.create_subprocess_exec(
            python, "-I", "-c", script, cwd="/",
            env={"PATH": os.defpath, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"},
            stdin=asyncio.subprocess.PIPE if payload is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    except OSError as err:
        raise ApplicationError(
            f"the job interpreter {python} cannot be started ({err.strerror or err}); "
            "point the sandbox worker's python at an installed interpreter",
            type=ErrorType.JOB_INTERPRETER_MISSING) from err
    try:
        out, err = await asyncio.wait_for(proc.communicate(payload), timeout_s)
    except TimeoutError as exc:
        raise ApplicationError(
            f"probing the job interpreter {python} took over {timeout_s:g} s; "
            "the machine may be overloaded", type=ErrorType.PROBE_TIMEOUT) from exc
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return _answer(python, what, proc.returncode, out, err)


def _answer(python: str, what: str, code: int | None, out: bytes, err: bytes,
            ) -> dict[str, Any]:
    if code != 0:
        tail = err.decode(errors="replace").strip()[-500:]
        raise ApplicationError(f"the job interpreter {python} failed to run {what} "
                               f"(exit {code}): {tail}", type=ErrorType.PROBE_FAILED)
    try:
        answer: object = json.loads(out)
    except ValueError as exc:
        raise ApplicationError(f"the job interpreter {python} answered {what} with "
                               f"something other than JSON: {out[:200]!r}",
                               type=ErrorType.PROBE_FAILED) from exc
    if not isinstance(answer, dict):
        raise ApplicationError(f"{what} of {python} returned {type(answer).__name__}",
                               type=ErrorType.PROBE_FAILED)
    return cast("dict[str, Any]", answer)
