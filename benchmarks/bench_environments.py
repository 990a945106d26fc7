"""Provisioning a job environment: the first time (resolve and install) vs a cache hit.

The environment is made from a local wheelhouse of small wheels (no network), so the figures
are the machinery's own: uv's resolution and installation, the atomic rename and the record,
against the lookup of an environment already provisioned (what every later job pays).
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

from activities.environments import Environments, Sources
from tests.activities.environments.wheels import make_wheel

WHEELS = 20


def _wheelhouse(root: Path) -> tuple[Path, list[str]]:
    house = root / "wheelhouse"
    names = [f"benchpkg{i:02d}" for i in range(WHEELS)]
    for index, name in enumerate(names):
        requires = (names[index + 1],) if index + 1 < len(names) else ()
        make_wheel(house, name, "1.0", requires=requires, code="X = 1\n" * 200)
    return house, names


async def run(rounds: int = 3) -> dict[str, float]:
    """Median first-time and cache-hit provisioning, in milliseconds, over ``rounds``."""
    first: list[float] = []
    again: list[float] = []
    installs = 0
    with tempfile.TemporaryDirectory(prefix="assay-bench-envs-") as tmp:
        house, names = _wheelhouse(Path(tmp))
        for index in range(rounds):
            root = Path(tmp) / f"environments-{index}"
            environments = Environments(root, sources=Sources(find_links=house))
            started = time.perf_counter()
            await environments.prepare(None, [names[0]])
            first.append(time.perf_counter() - started)
            started = time.perf_counter()
            hit = await Environments(root, sources=Sources(find_links=house)).prepare(
                None, [names[0]])
            again.append(time.perf_counter() - started)
            assert hit.reused
            installs += environments.installs
            shutil.rmtree(root / ".uv-cache", ignore_errors=True)
    return {"first_ms": statistics.median(first) * 1000,
            "again_ms": statistics.median(again) * 1000,
            "packages": float(WHEELS), "installs": float(installs)}
