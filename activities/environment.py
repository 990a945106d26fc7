"""What the sandbox's job interpreter offers: its Python version and installed distributions.

The coder's deep path and the introspecting debugger write code for the machine that runs
it, so they are shown these facts (``probe_environment``, on the sandbox pool). One isolated
subprocess of the job interpreter answers, and the answer is reused for a short while: a run
with many failing tasks probes once, not once per debugger.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any, cast

from temporalio import activity
from temporalio.exceptions import ApplicationError

from workflows.roles import PROBE_ENVIRONMENT, EnvironmentFacts

MAX_PACKAGES = 400
PROBE_SCRIPT = r"""
import importlib.metadata as md, json, re, sys
found = {}
for dist in md.distributions():
    name = dist.metadata["Name"]
    if name:
        found.setdefault(re.sub(r"[-_.]+", "-", name).lower(), dist.version or "")
json.dump({"python": sys.version.split()[0], "packages": found}, sys.stdout)
"""


class EnvironmentProbe:
    """Probes the job interpreter, caching its answer for ``ttl_s`` seconds.

    Args:
        python: the interpreter jobs run with (the sandbox's).
        timeout_s: how long one probe may take.
        ttl_s: how long an answer is reused.
        max_packages: most distributions reported (by name, in order).
        clock: monotonic time source (tests pass their own).
    """

    def __init__(self, python: str = sys.executable, *, timeout_s: float = 30.0,
                 ttl_s: float = 60.0, max_packages: int = MAX_PACKAGES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.python = python
        self.runs = 0
        """Probe subprocesses started so far."""
        self._timeout_s = timeout_s
        self._ttl_s = ttl_s
        self._max_packages = max_packages
        self._clock = clock
        self._lock = asyncio.Lock()
        self._cached: tuple[float, EnvironmentFacts] | None = None

    @activity.defn(name=PROBE_ENVIRONMENT)
    async def probe_environment(self) -> EnvironmentFacts:
        """The job interpreter's Python version and installed distributions (name -> version)."""
        async with self._lock:  # concurrent callers share one probe
            if self._cached is None or self._clock() - self._cached[0] >= self._ttl_s:
                self._cached = (self._clock(), self._facts(await self._run()))
            return self._cached[1]

    def _facts(self, answer: dict[str, Any]) -> EnvironmentFacts:
        raw = cast("dict[str, Any]", answer.get("packages") or {})
        names = sorted(raw)[:self._max_packages]
        return EnvironmentFacts(python=str(answer.get("python", "")),
                                packages={n: str(raw[n]) for n in names})

    async def _run(self) -> dict[str, Any]:
        """One probe subprocess, isolated (-I) like a job: no user site, no PYTHON* vars."""
        self.runs += 1
        try:
            proc = await asyncio.create_subprocess_exec(
                self.python, "-I", "-c", PROBE_SCRIPT, cwd="/",
                env={"PATH": os.defpath, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"},
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE)
        except OSError as err:
            raise ApplicationError(
                f"the job interpreter {self.python} cannot be started ({err.strerror or err}); "
                "point the sandbox worker's python at an installed interpreter",
                type="JobInterpreterMissing") from err
        try:
            out, err = await asyncio.wait_for(proc.communicate(), self._timeout_s)
        except TimeoutError as exc:
            raise ApplicationError(
                f"probing the job interpreter {self.python} took over {self._timeout_s:g} s; "
                "the machine may be overloaded", type="ProbeTimeout") from exc
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        return _answer(self.python, proc.returncode, out, err)


def _answer(python: str, code: int | None, out: bytes, err: bytes) -> dict[str, Any]:
    if code != 0:
        tail = err.decode(errors="replace").strip()[-500:]
        raise ApplicationError(f"the job interpreter {python} failed to list its packages "
                               f"(exit {code}): {tail}", type="ProbeFailed")
    try:
        answer: object = json.loads(out)
    except ValueError as exc:
        raise ApplicationError(f"the job interpreter {python} listed its packages as something "
                               f"other than JSON: {out[:200]!r}", type="ProbeFailed") from exc
    if not isinstance(answer, dict):
        raise ApplicationError(f"the package listing of {python} is a {type(answer).__name__}",
                               type="ProbeFailed")
    return cast("dict[str, Any]", answer)
