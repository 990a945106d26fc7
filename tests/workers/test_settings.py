"""Settings: one data directory, whatever folder a command runs from."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.e2e import ROOT
from workers.settings import Settings


def root_seen_from(folder: Path, **env: str) -> str:
    """The data directory a fresh process started in ``folder`` reads from its settings."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    out = subprocess.run([sys.executable, "-c", "from workers.settings import Settings; "
                          "print(Settings().root)"], cwd=folder, capture_output=True, text=True,
                         check=True, env=clean | {"PYTHONPATH": str(ROOT)} | env)
    return out.stdout.strip()


def test_the_default_data_directory_is_the_users_wherever_the_command_runs(
        tmp_path: Path) -> None:
    home = tmp_path / "data-home"
    one, two = tmp_path / "diabetes", tmp_path / "elsewhere" / "deeper"
    for folder in (one, two):
        folder.mkdir(parents=True)
    seen = {root_seen_from(folder, XDG_DATA_HOME=str(home)) for folder in (one, two)}
    assert seen == {str(home / "assay")}
    assert not (one / ".assay").exists() and not (two / ".assay").exists()


def test_a_relative_assay_data_dir_is_made_absolute_where_it_is_read(tmp_path: Path) -> None:
    assert root_seen_from(tmp_path, ASSAY_DATA_DIR="mine") == str(tmp_path / "mine")
    settings = Settings(data_dir=Path("~/somewhere"))
    assert settings.data_dir.is_absolute() and settings.data_dir == settings.root
