"""Removing environments: by digest prefix or name, never an ambiguous one, and pruning."""

from __future__ import annotations

import fcntl
import os
from datetime import UTC, datetime, timedelta

import pytest

from activities.environments import EnvironmentProblem, Environments
from activities.environments.cleanup import prune, remove, select
from activities.environments.store import LAST_USED
from tests.activities.environments.wheels import make_wheel


@pytest.fixture(autouse=True)
def delta(environments: Environments) -> None:
    """One more package for the wheelhouse, to add to the ``tiny`` set."""
    assert environments.sources.find_links is not None
    make_wheel(environments.sources.find_links, "delta", "1.0")


async def test_remove_by_prefix_frees_the_directory_and_refuses_ambiguity(
        environments: Environments) -> None:
    plain = await environments.prepare("tiny", [])
    more = await environments.prepare("tiny", ["delta"])
    with pytest.raises(EnvironmentProblem, match="matches 2 environments"):
        select(environments, "tiny")
    with pytest.raises(EnvironmentProblem, match="no provisioned environment"):
        select(environments, "0000")
    with pytest.raises(EnvironmentProblem, match="neither a digest prefix"):
        select(environments, "../etc")
    removed = remove(environments, select(environments, more.digest[:8]))
    assert removed.digest == more.digest and removed.freed > 0
    assert environments.installed(more.digest) is None
    assert not (environments.root / more.digest).exists()
    assert select(environments, "tiny")["digest"] == plain.digest  # no longer ambiguous


async def test_remove_refuses_while_the_environment_is_being_provisioned(
        environments: Environments) -> None:
    prepared = await environments.prepare("tiny", [])
    record = select(environments, prepared.digest)
    with open(environments.lock_path(prepared.digest), "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)  # what provisioning holds while it installs
        with pytest.raises(EnvironmentProblem, match="being provisioned now"):
            remove(environments, record)
    assert environments.installed(prepared.digest) is not None


async def test_prune_removes_only_environments_unused_for_the_given_days(
        environments: Environments) -> None:
    old = await environments.prepare("tiny", [])
    recent = await environments.prepare("tiny", ["delta"])
    long_ago = (datetime.now(UTC) - timedelta(days=40)).timestamp()
    os.utime(environments.root / old.digest / LAST_USED, (long_ago, long_ago))
    removed = prune(environments, 30)
    assert [r.digest for r in removed] == [old.digest] and removed[0].freed > 0
    assert environments.installed(recent.digest) is not None
    assert prune(environments, 30) == []
    again = await environments.prepare("tiny", [])  # provisioned anew, used now
    assert not again.reused and prune(environments, 30) == []
