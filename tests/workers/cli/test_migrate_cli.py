"""``assay migrate``: brings the database to the newest revision, and ``--check`` says if behind.

The database comes from ``--database-url`` or, like every command, from settings.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from database.migrations import head
from workers.cli.main import app

runner = CliRunner()
db = pytest.mark.integration


def migrate(*args: str) -> Result:
    return runner.invoke(app, ["migrate", *args])


@db
def test_migrate_upgrades_once_and_check_tells_behind_from_current(
        fresh_database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ASSAY_DATABASE_URL", fresh_database_url)
    monkeypatch.setenv("ASSAY_DATA_DIR", str(tmp_path / "assay"))
    behind = migrate("--check")
    assert behind.exit_code == 1
    assert f"schema revision none, behind the newest ({head()}); run `assay migrate`" \
        in behind.stderr

    first = migrate()
    assert first.exit_code == 0, first.output
    assert first.stdout.endswith(f": schema revision none -> {head()}\n")
    again = migrate()
    assert again.exit_code == 0 and again.stdout.endswith(
        f": schema revision {head()}, the newest\n")
    current = migrate("--check")
    assert current.exit_code == 0 and current.stdout == again.stdout


@db
def test_database_url_option_picks_the_database(fresh_database_url: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_DATABASE_URL", "postgresql+asyncpg://nobody@127.0.0.1:1/none")
    result = migrate("--database-url", fresh_database_url)
    assert result.exit_code == 0, result.output
    assert f"-> {head()}" in result.stdout


def test_an_unreachable_database_is_explained() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    result = migrate("--database-url", f"postgresql+asyncpg://ada:secret@127.0.0.1:{port}/a")
    assert result.exit_code == 3
    assert f"cannot open the database at postgresql+asyncpg://ada:***@127.0.0.1:{port}/a" \
        in result.stderr
    assert "secret" not in result.stderr
