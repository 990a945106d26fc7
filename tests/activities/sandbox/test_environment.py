"""``probe_environment``: the job interpreter's Python version and distributions, probed by a
real subprocess and reused for a while."""

from __future__ import annotations

import asyncio
import importlib.metadata
import platform
import sys
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError

from activities.sandbox.environment import EnvironmentProbe


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_the_probe_reports_the_interpreter_and_its_distributions() -> None:
    facts = await EnvironmentProbe(sys.executable).probe_environment()
    assert facts.python == platform.python_version()
    assert facts.packages["pydantic"] == importlib.metadata.version("pydantic")
    assert facts.packages["temporalio"] == importlib.metadata.version("temporalio")
    assert list(facts.packages) == sorted(facts.packages)
    assert all(name == name.lower() and "_" not in name for name in facts.packages)


async def test_the_listing_is_capped_to_the_first_names() -> None:
    full = await EnvironmentProbe(sys.executable).probe_environment()
    capped = await EnvironmentProbe(sys.executable, max_packages=5).probe_environment()
    assert list(capped.packages) == list(full.packages)[:5]


async def test_an_answer_is_reused_until_it_is_stale() -> None:
    clock = Clock()
    probe = EnvironmentProbe(sys.executable, ttl_s=60, clock=clock)
    first = await probe.probe_environment()
    clock.now = 59
    assert await probe.probe_environment() == first and probe.runs == 1
    clock.now = 60
    await probe.probe_environment()
    assert probe.runs == 2


async def test_concurrent_callers_share_one_probe() -> None:
    probe = EnvironmentProbe(sys.executable)
    answers = await asyncio.gather(*(probe.probe_environment() for _ in range(5)))
    assert probe.runs == 1 and all(a == answers[0] for a in answers)


async def test_a_missing_interpreter_is_named(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-python")
    with pytest.raises(ApplicationError) as err:
        await EnvironmentProbe(missing).probe_environment()
    assert err.value.type == "JobInterpreterMissing" and missing in str(err.value)


async def test_an_interpreter_that_fails_is_reported(tmp_path: Path) -> None:
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'no stdlib here' >&2\nexit 3\n")
    broken.chmod(0o755)
    with pytest.raises(ApplicationError) as err:
        await EnvironmentProbe(str(broken)).probe_environment()
    assert err.value.type == "ProbeFailed"
    assert "exit 3" in str(err.value) and "no stdlib here" in str(err.value)
