"""The ``assay`` group loads a command's module only when it runs.

The top-level help lists every command by the short help given at registration, which must be
the command's own; listing imports none of the command modules, the reports or a database
driver (checked in a fresh interpreter); and a lazy command runs like any other.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from typer import _click as click
from typer.testing import CliRunner

from workers.cli.lazy import LAZY, LazyGroup
from workers.cli.main import app


def test_every_lazy_command_is_listed_with_its_own_short_help() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, LazyGroup)
    ctx = click.Context(group)
    for name, entry in LAZY.items():
        real = entry.load(name)
        assert real.get_short_help_str(limit=500) == entry.short_help, name
    assert set(LAZY) <= set(group.list_commands(ctx))


def test_the_help_imports_no_command_module() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from workers.cli.main import app\n"
        "result = CliRunner().invoke(app, ['--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        "assert 'hypotheses' in result.output\n"
        "heavy = ['workers.cli.run', 'workers.cli.branch', 'workers.cli.skills',\n"
        "         'activities.reports.markdown', 'sqlalchemy', 'matplotlib']\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)
    assert done.stdout.strip() == ""


def test_a_lazy_command_runs_and_shows_its_own_help() -> None:
    result = CliRunner().invoke(app, ["codec-key", "--help"])
    assert result.exit_code == 0
    assert "ASSAY_CODEC_KEYS" in result.output
    wrong = CliRunner().invoke(app, ["pause"])  # its argument is still required
    assert wrong.exit_code == 2


def test_status_loads_no_database_driver_or_figure_library() -> None:
    code = (
        "import os, socket, sys\n"
        "from typer.testing import CliRunner\n"
        "from workers.cli.main import app\n"
        "with socket.socket() as s:\n"
        "    s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]\n"
        "result = CliRunner().invoke(app, ['status', 'assay-run-x'],\n"
        "                            env={'ASSAY_TEMPORAL_ADDRESS': f'127.0.0.1:{port}'})\n"
        "assert result.exit_code == 3, (result.exit_code, result.output)\n"
        "heavy = ['sqlalchemy', 'matplotlib', 'workers.stack.check', 'workers.stack.launcher']\n"
        "print(','.join(m for m in heavy if m in sys.modules), flush=True)\n"
        # as `assay` itself ends (workers.cli.main.main): the client's native threads may
        # still be winding down, and interpreter finalization would abort on them
        "os._exit(0)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)
    assert done.stdout.strip() == ""


@pytest.mark.parametrize("args", [["memory", "rules"], ["skills", "search", "read a FITS image"]])
def test_a_read_of_the_database_loads_neither_temporal_nor_the_stack_nor_memorys_activities(
        fresh_database_url: str, tmp_path: Path, args: list[str]) -> None:
    """What the look-ups cost from a fresh process was mostly modules they never used."""
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from workers.cli.main import app\n"
        f"result = CliRunner().invoke(app, {args!r})\n"
        "assert result.exit_code == 0, (result.exit_code, result.output)\n"
        "heavy = ['temporalio.client', 'client.assay', 'workers.connection',\n"
        "         'workers.stack.launcher', 'workers.stack.temporal', 'activities.memory.memory',\n"
        "         'activities.memory.schema' if 'skills' in sys.argv else 'skills.schema']\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n")
    env = {**os.environ, "ASSAY_DATABASE_URL": fresh_database_url,
           "ASSAY_DATA_DIR": str(tmp_path / "assay")}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=True, timeout=120, env=env)
    assert done.stdout.strip() == ""
