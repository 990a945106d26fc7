"""The workflow sandbox compiles a workflow module once per process, and runs it anew each time."""

from __future__ import annotations

import importlib
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio import workflow
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from workers.pools import codecache
from workers.pools.codecache import CodeCache

WORKFLOW = '''
from temporalio import workflow

STARTED = []


@workflow.defn(name="CachedProbe")
class CachedProbe:
    @workflow.run
    async def run(self) -> int:
        return VERSION


STARTED.append(1)  # module state: one entry per import
VERSION = {version}
'''


@pytest.fixture
def package(tmp_path: Path) -> Iterator[str]:
    """A package ``cacheprobe`` on the path, served through a :class:`CodeCache` of its own."""
    root = tmp_path / "cacheprobe"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "flow.py").write_text(textwrap.dedent(WORKFLOW.format(version=1)))
    finder = CodeCache(["cacheprobe"])
    sys.path.insert(0, str(tmp_path))
    sys.meta_path.insert(0, finder)
    try:
        yield str(root / "flow.py")
    finally:
        sys.meta_path.remove(finder)
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.split(".")[0] == "cacheprobe"]:
            del sys.modules[name]


def _instance(runner: SandboxedWorkflowRunner) -> None:
    flow: Any = importlib.import_module("cacheprobe.flow")
    runner.prepare_workflow(workflow._Definition.must_from_class(flow.CachedProbe))


async def test_each_execution_runs_the_module_anew_from_one_compilation(package: str) -> None:
    before = codecache.counts.compiled, codecache.counts.reused
    runner = SandboxedWorkflowRunner()
    for _ in range(5):
        _instance(runner)  # the sandbox imports cacheprobe.flow for each instance
    compiled = codecache.counts.compiled - before[0]
    reused = codecache.counts.reused - before[1]
    # The host's import compiles the package and the module once; five sandboxes reuse them.
    assert compiled == 2
    assert reused >= 5
    # Module state is not shared: the host's copy saw one import, not six.
    flow: Any = importlib.import_module("cacheprobe.flow")
    assert flow.STARTED == [1]


async def test_a_changed_file_is_compiled_again(package: str) -> None:
    runner = SandboxedWorkflowRunner()
    _instance(runner)
    compiled = codecache.counts.compiled
    path = Path(package)
    path.write_text(textwrap.dedent(WORKFLOW.format(version=22)))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    _instance(runner)
    assert codecache.counts.compiled == compiled + 1


def test_install_puts_one_cache_first_on_the_import_path() -> None:
    original = list(sys.meta_path)
    try:
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, CodeCache)]
        codecache.install()
        codecache.install()
        assert isinstance(sys.meta_path[0], CodeCache)
        assert sum(isinstance(f, CodeCache) for f in sys.meta_path) == 1
    finally:
        sys.meta_path[:] = original


def test_other_packages_are_left_to_the_path_finder() -> None:
    import workflows

    assert CodeCache().find_spec("json", None) is None
    assert CodeCache().find_spec("workflowsx", None) is None
    spec = CodeCache().find_spec("workflows.constants", workflows.__path__)
    assert spec is not None and type(spec.loader).__name__ == "_Loader"
