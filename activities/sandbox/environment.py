"""What the sandbox's job interpreter offers: its Python version and installed distributions.

The coder's deep path and the introspecting debugger write code for the machine that runs
it, so they are shown these facts (``probe_environment``, on the sandbox pool). One isolated
subprocess of the job interpreter answers, and the answer is reused for a short while: a run
with many failing tasks probes once, not once per debugger.
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
import time
from collections.abc import Callable
from typing import Any, cast

from activities.common.heartbeat import Heartbeats
from activities.review.probe import ask_interpreter
from workflows.catalogue import PROBE_ENVIRONMENT
from workflows.contracts.roles import EnvironmentFacts

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

    @PROBE_ENVIRONMENT.defn
    async def probe_environment(self) -> EnvironmentFacts:
        """The job interpreter's Python version and installed distributions (name -> version).

        Heartbeats while the interpreter answers, so a dead worker's probe moves on in seconds.
        """
        return await Heartbeats().during(self.facts(), phase="probe_environment")

    async def facts(self) -> EnvironmentFacts:
        """What :meth:`probe_environment` answers, asked once per ``ttl_s``."""
        async with self._lock:  # concurrent callers share one probe
            if self._cached is None or self._clock() - self._cached[0] >= self._ttl_s:
                self._cached = (self._clock(), self._facts(await self._run()))
            return self._cached[1]

    async def fingerprint(self) -> str:
        """``py<version>/<12 hex>``: the interpreter and a digest of its packages ("" on error)."""
        try:
            facts = await self.facts()
        except Exception:  # a fingerprint is a hint for reflection, never a reason to fail
            return ""
        listing = "\n".join(f"{n}=={v}" for n, v in sorted(facts.packages.items()))
        return f"py{facts.python}/{hashlib.sha256(listing.encode()).hexdigest()[:12]}"

    def _facts(self, answer: dict[str, Any]) -> EnvironmentFacts:
        raw = cast("dict[str, Any]", answer.get("packages") or {})
        names = sorted(raw)[:self._max_packages]
        return EnvironmentFacts(python=str(answer.get("python", "")),
                                packages={n: str(raw[n]) for n in names})

    async def _run(self) -> dict[str, Any]:
        """One probe subprocess of the job interpreter."""
        self.runs += 1
        return await ask_interpreter(self.python, PROBE_SCRIPT, None, timeout_s=self._timeout_s,
                                     what="the package listing")
