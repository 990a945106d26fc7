"""Isolation tests that cannot run here: skipped on a laptop, failed in CI.

A job's isolation (bubblewrap's namespaces, a dedicated uid under a root worker, resource
limits with an interpreter every uid can run) is tested only where the machine offers it.
Elsewhere those tests skip, saying why (``-rs``); with ``ASSAY_REQUIRE_ISOLATION=1``, which
``.ci/run`` sets, they fail instead, so CI never passes with the sandbox's isolation untested.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

REQUIRE = "ASSAY_REQUIRE_ISOLATION"


def lacking(reason: str) -> NoReturn:
    """Skip the running test for want of ``reason``; fail it when isolation is required.

    Args:
        reason: What the machine lacks, as the skip or the failure says it
            ("bubblewrap does not work here: ...").
    """
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"isolation test cannot run: {reason} ({REQUIRE}=1: run the suite as root "
                    "with bubblewrap installed, as .ci/run does)")
    pytest.skip(reason)


@pytest.fixture
def root_worker() -> None:
    """The test needs a root worker (jobs run under dedicated uids); see :func:`lacking`."""
    if os.geteuid() != 0:
        lacking("dedicated job uids need a root worker")


as_root = pytest.mark.usefixtures("root_worker")
"""Marks a test that needs a root worker (``root_worker`` is a plugin of tests/conftest.py)."""
