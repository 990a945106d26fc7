"""One stack, whatever folder a command runs from: the CLI as a new user runs it.

A stack is started with ``assay up --detach`` and no ``ASSAY_DATA_DIR``, from one folder; then
a plan is run from its own folder, ``assay check`` asked from others, a second stack of another
data directory tries the same port, and a run is submitted with another data directory. The
same stack shows where the API key went and the modes of its run data.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.e2e import EXAMPLE, ROOT
from tests.workers.stack.test_embedded import free_port, private_root

CANARY = "sk-ant-canary-0123456789"


@dataclass(frozen=True)
class Stack:
    env: dict[str, str]
    data: Path
    """The data directory ``assay up`` chose (no ASSAY_DATA_DIR given)."""
    folder: Path
    """A user's own folder: the plan and its data, outside the clone."""
    root: Path
    said: str


def assay(*args: str, env: dict[str, str], cwd: Path,
          timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "workers.cli", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    with private_root() as root:
        folder = root / "diabetes"
        shutil.copytree(EXAMPLE.parent, folder)
        shutil.copy(EXAMPLE, folder / "plan.json")
        elsewhere = root / "elsewhere"
        elsewhere.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
        env |= {"PYTHONPATH": str(ROOT), "XDG_DATA_HOME": str(root / "data-home"),
                "ANTHROPIC_API_KEY": CANARY,
                "ASSAY_TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
                "ASSAY_TEMPORAL_UI_PORT": str(free_port()), "ASSAY_SKILLS_BUILTIN": "false"}
        up = assay("up", "--detach", env=env, cwd=elsewhere)
        try:
            assert up.returncode == 0, up.stderr[-3000:]
            yield Stack(env=env, data=root / "data-home" / "assay", folder=folder, root=root,
                        said=up.stderr)
        finally:
            assay("down", env=env, cwd=root, timeout=120)
            other = env | {"ASSAY_DATA_DIR": str(root / "other")}
            assay("down", env=other, cwd=root, timeout=120)


@pytest.mark.integration
def test_up_says_its_data_directory_and_check_finds_it_from_any_folder(stack: Stack) -> None:
    assert f"data directory: {stack.data}" in stack.said
    for where in (stack.folder, stack.root, Path("/")):
        check = assay("check", env=stack.env, cwd=where)
        assert check.returncode == 0, (where, check.stdout)
        assert f"stack of {stack.data}" in check.stdout
    assert not (stack.folder / ".assay").exists()


@pytest.mark.integration
def test_a_plan_run_from_its_own_folder_completes(stack: Stack) -> None:
    run = assay("run", "plan.json", "--wait", "--again", "--no-agents", env=stack.env,
                cwd=stack.folder)
    assert run.returncode == 0, (run.stdout, run.stderr[-3000:])
    assert not (stack.folder / ".assay").exists(), "inputs go to the stack's store"
    ledgers = list((stack.data / "runs").glob("*/ledger.jsonl"))
    assert ledgers and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in ledgers)
    assert all(stat.S_IMODE(p.parent.stat().st_mode) == 0o700 for p in ledgers)


@pytest.mark.integration
def test_a_second_up_on_the_port_with_another_data_directory_refuses(stack: Stack) -> None:
    other = stack.env | {"ASSAY_DATA_DIR": str(stack.root / "other")}
    second = assay("up", "--detach", env=other, cwd=stack.root, timeout=180)
    assert second.returncode == 1
    assert f"serves the Assay stack of data directory {stack.data}" in second.stderr
    assert "ASSAY_TEMPORAL_ADDRESS=" in second.stderr  # how to take another port
    assert not (stack.root / "other" / "postgres").exists(), "it stopped before its services"
    assert assay("check", env=stack.env, cwd=stack.root).returncode == 0
    check = assay("check", env=other, cwd=stack.root)
    assert check.returncode == 1
    assert f"serves the stack of data directory {stack.data}" in check.stdout


@pytest.mark.integration
def test_a_run_whose_inputs_the_workers_cannot_read_is_refused_before_it_starts(
        stack: Stack) -> None:
    other = stack.env | {"ASSAY_DATA_DIR": str(stack.root / "elsewhere-data")}
    run = assay("run", "plan.json", "--again", "--no-agents", env=other, cwd=stack.folder)
    assert run.returncode == 2, run.stderr
    assert f"reads inputs from {stack.data / 'store'}" in run.stderr
    assert "nothing was started" in run.stderr and not run.stdout.strip()
    assert not (stack.root / "elsewhere-data").exists(), "no input was stored anywhere"


def environ_of(pid: int) -> str:
    return Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")


@pytest.mark.integration
def test_the_api_key_reaches_the_worker_process_only(stack: Stack) -> None:
    info = json.loads((stack.data / "stack.json").read_text())
    assert CANARY in environ_of(info["workers_pid"])
    assert CANARY not in environ_of(info["pid"]), "the detached stack got it on stdin"
    assert CANARY not in environ_of(info["temporal_pid"])
    assert CANARY not in environ_of(info["postgres_pid"])


@pytest.mark.integration
def test_the_stacks_run_data_is_private(stack: Stack) -> None:
    assert stat.S_IMODE(stack.data.stat().st_mode) & 0o066 == 0
    for name in ("temporal.db", "logs", "logs/temporal.log", "logs/stack.log", "stack.json"):
        mode = stat.S_IMODE((stack.data / name).stat().st_mode)
        assert mode in (0o600, 0o700), (name, oct(mode))
    check = assay("check", env=stack.env, cwd=stack.root)
    assert "file modes" in check.stdout and f"{stack.data} is private" in check.stdout
