"""Fixtures shared by the activity tests."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from activities.common.trees import remove_tree
from activities.environments import Catalog, Environments, Sources
from tests.activities.environments.wheels import tiny_wheelhouse


@pytest.fixture
def work_dir() -> Iterator[Path]:
    """A work directory every uid can reach (pytest's own tmp dirs are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="assay-sandbox-test-"))
    path.chmod(0o755)
    yield path
    remove_tree(path)  # whatever a job left, however deep


@pytest.fixture
def offline_root() -> Iterator[Path]:
    """A directory every uid can reach (jobs run as an unprivileged uid)."""
    path = Path(tempfile.mkdtemp(prefix="assay-envs-test-"))
    path.chmod(0o755)
    yield path
    remove_tree(path)  # whatever a job left, however deep


@pytest.fixture
def environments(offline_root: Path) -> Environments:
    """Environments made only from the tiny wheelhouse; the operator defines ``tiny``."""
    operator = offline_root / "named"
    operator.mkdir()
    (operator / "tiny.txt").write_text("# a named set\nalpha\n", encoding="utf-8")
    return Environments(offline_root / "environments", catalog=Catalog(operator),
                        sources=Sources(find_links=tiny_wheelhouse(offline_root)),
                        timeout_s=120)
