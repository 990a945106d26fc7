"""The documentation's "From Python" example runs as written against a server with workers.

The code block is read from the page ``docs/guides/python.md`` (it is marked runnable by this
test: see ``docs/contributing.md``) when the test runs, so the page cannot drift from what
works: a second start of the same plan, and a plan supplied right after a goal run starts,
are both in it.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import signal
import sys
from pathlib import Path

from tests.docs.blocks import block_of, pages
from tests.support.e2e import EXAMPLE, ROOT

PAGE = "guides/python.md"
"""The page that holds the example, relative to ``docs/``."""
DIED_AT_EXIT = (-signal.SIGSEGV, -signal.SIGABRT)
"""Signals a native runtime's teardown has killed the example's interpreter with."""


def readme_python() -> str:
    """The runnable Python block of the "From Python" page."""
    block = block_of(PAGE)
    assert block.language == "python" and block.test == "tests/workers/cli/test_readme_python.py"
    return block.code


def test_the_readme_block_is_found_and_reads_the_address_from_settings() -> None:
    code = readme_python()
    assert "asyncio.run(main())" in code and "Settings()" in code
    assert "7233" not in code  # the address comes from ASSAY_TEMPORAL_ADDRESS


async def test_the_readme_python_example_runs_as_written(served: dict[str, str],
                                                         tmp_path: Path) -> None:
    folder = tmp_path / "iris"
    shutil.copytree(EXAMPLE.parent, folder)
    script = folder / "example.py"
    script.write_text(readme_python())
    for _ in range(2):  # the same plan twice: `again=True` starts another run
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(script), cwd=folder, env=served,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), timeout=240)
        lines = out.decode().splitlines()
        said = (lines, proc.returncode, err.decode()[-3000:])
        assert lines and lines[-1] == "completed", said  # the goal run ran the supplied plan
        assert lines[-2].startswith("completed ['completed'"), said
        # In some CI runs the interpreter died of a signal (SIGSEGV, SIGABRT in grpc's
        # cygrpc) while it exited, after the example had printed all of the above: native
        # runtimes tearing down. A death by signal after complete output is tolerated; an
        # exit status of its own (an exception, sys.exit) fails.
        assert proc.returncode == 0 or proc.returncode in DIED_AT_EXIT, said


def test_the_readmes_temporal_commands_name_the_server_assay_uses() -> None:
    """The ``temporal`` CLI ignores ASSAY_TEMPORAL_ADDRESS: each block sets the address."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *pages()])
    blocks = re.findall(r"```bash\n(.*?)```", text, re.DOTALL)
    with_temporal = [b for b in blocks if re.search(r"^temporal ", b, re.MULTILINE)]
    assert with_temporal
    for block in with_temporal:
        assert ("--address" in block or "export TEMPORAL_ADDRESS=" in block), block
        assert "ASSAY_TEMPORAL_ADDRESS" in block, block
