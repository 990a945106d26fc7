"""Every code block the documentation marks runnable is run, by this suite or a named test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.blocks import ROOT, Block, runnable_blocks

RUNNERS = {"python": [sys.executable, "-"], "bash": ["bash", "-e", "-s"]}
"""How a standalone block of each language is run: its code on stdin."""
STANDALONE = [b for b in runnable_blocks() if b.test is None]


def test_blocks_are_found_both_ways() -> None:
    blocks = runnable_blocks()
    assert STANDALONE, "no block is marked <!-- runnable -->"
    assert any(b.page == "guides/python.md" and b.test for b in blocks), \
        "the From Python example lost its marker"


@pytest.mark.parametrize("block", [b for b in runnable_blocks() if b.test], ids=lambda b: b.name)
def test_a_block_run_elsewhere_names_a_test_that_reads_its_page(block: Block) -> None:
    assert block.test is not None
    test = ROOT / block.test
    assert test.is_file(), f"{block.name} names {block.test}, which does not exist"
    assert block.page in test.read_text(encoding="utf-8"), \
        f"{block.test} does not read {block.page}, where {block.name} is"


@pytest.mark.parametrize("block", STANDALONE, ids=lambda b: b.name)
def test_a_standalone_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    assert block.language in RUNNERS, f"{block.name}: no runner for {block.language} blocks"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ASSAY_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(RUNNERS[block.language], input=block.code, text=True, cwd=tmp_path,
                          env=env, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, (block.name, done.stdout[-2000:], done.stderr[-3000:])
