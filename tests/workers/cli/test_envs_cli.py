"""``assay envs``: list provisioned environments, prepare one ahead of time, refuse bad names."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.activities.environments.wheels import make_wheel, tiny_wheelhouse
from workers.cli.main import app

runner = CliRunner()


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Settings that make environments only from a tiny wheelhouse; the operator names ``tiny``."""
    named = tmp_path / "named"
    named.mkdir()
    (named / "tiny.txt").write_text("alpha\n")
    monkeypatch.setenv("ASSAY_DATA_DIR", str(tmp_path / "assay"))
    monkeypatch.setenv("ASSAY_ENVIRONMENTS_DIR", str(named))
    monkeypatch.setenv("ASSAY_WHEELHOUSE_DIR", str(tiny_wheelhouse(tmp_path)))
    return tmp_path / "assay" / "environments"


def test_prepare_then_list_then_prepare_again_installs_once(offline: Path) -> None:
    empty = runner.invoke(app, ["envs"])
    assert empty.exit_code == 0 and "no environments provisioned" in empty.output
    assert "named sets: science, tiny" in empty.output

    first = runner.invoke(app, ["envs", "prepare", "tiny", "-r", "beta==2.0"])
    assert first.exit_code == 0, first.output
    assert "2 packages, installed in" in first.output and "alpha==1.0 beta==2.0" in first.output

    listed = runner.invoke(app, ["envs", "list"])
    assert listed.exit_code == 0 and "tiny" in listed.output and "2 (alpha, beta)" in listed.output

    again = runner.invoke(app, ["envs", "prepare", "tiny", "-r", "beta==2.0"])
    assert "already provisioned, nothing installed" in again.output


@pytest.mark.parametrize(("args", "words"), [
    (["envs", "prepare", "../etc"], "environment name refused"),
    (["envs", "prepare", "x" * 10_000], "environment name refused"),
    (["envs", "prepare", "tiny", "-r", "--index-url=https://evil.example"], "requirement refused"),
    (["envs", "prepare", "nope"], "no environment named 'nope'"),
    (["envs", "prepare", "tiny", "-r", "nosuchpkg"], "package 'nosuchpkg' was not found"),
])
def test_bad_names_and_requirements_exit_2_with_the_reason(offline: Path, args: list[str],
                                                           words: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert words in result.output


@pytest.mark.parametrize(("args", "reason"), [
    (["envs", "prepare", "tiny", "-r", "pkg @ https://x/y.whl"],
     "requirement refused: requirement 'pkg @ https://x/y.whl' names a direct URL; only package "
     "names with version specifiers are allowed (packages come from the configured index or "
     "wheelhouse)"),
    (["envs", "prepare", "Bad Name"],
     "environment name refused: a name is lower-case letters, digits, - and _, starting with a "
     "letter, at most 40 characters"),
    (["envs", "prepare", "a" * 41], "environment name refused: a name is lower-case letters"),
])
def test_a_refusal_gives_one_clear_reason(offline: Path, args: list[str], reason: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert reason in " ".join(result.output.split())
    assert "Value error" not in result.output and "^[a-z]" not in result.output
    assert result.output.count("refused") == 1  # one reason, no unrelated hint after it


def test_list_shows_additions_and_remove_and_prune_free_space(offline: Path) -> None:
    make_wheel(offline.parent.parent / "wheelhouse", "delta", "1.0")
    assert runner.invoke(app, ["envs", "prepare", "tiny"]).exit_code == 0
    added = runner.invoke(app, ["envs", "prepare", "tiny", "-r", "delta"])
    assert added.exit_code == 0, added.output
    listed = runner.invoke(app, ["envs"])
    assert "tiny + delta" in listed.output and "last used" in listed.output

    ambiguous = runner.invoke(app, ["envs", "remove", "tiny"])
    assert ambiguous.exit_code == 2 and "matches 2 environments" in ambiguous.output
    digest = next(p.name for p in offline.iterdir() if len(p.name) == 64
                  and "delta" in (p / "environment.json").read_text())
    removed = runner.invoke(app, ["envs", "remove", digest[:6]])
    assert removed.exit_code == 0, removed.output
    assert f"removed tiny@{digest[:12]}, freed " in removed.output
    assert not (offline / digest).exists()

    kept = runner.invoke(app, ["envs", "prune", "--older-than", "1"])
    assert kept.exit_code == 0 and "0 environment(s) unused for 1 days removed" in kept.output
    pruned = runner.invoke(app, ["envs", "prune", "--older-than", "0"])
    assert "1 environment(s) unused for 0 days removed" in pruned.output
    assert "no environments provisioned" in runner.invoke(app, ["envs"]).output


@pytest.mark.parametrize(("args", "words"), [
    (["envs", "remove", "../etc"], "neither a digest prefix"),
    (["envs", "remove", "x" * 10_000], "neither a digest prefix"),
    (["envs", "remove", "abcd"], "no provisioned environment"),
    (["envs", "prune", "--older-than", "-1"], "--older-than"),
])
def test_remove_and_prune_refuse_bad_input(offline: Path, args: list[str], words: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert words in result.output
