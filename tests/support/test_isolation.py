"""An isolation test this machine cannot run skips, saying why; CI makes it fail instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.isolation import REQUIRE, lacking


def test_without_the_requirement_a_missing_isolation_skips_with_its_reason(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE, raising=False)
    with pytest.raises(pytest.skip.Exception, match="bubblewrap is not installed"):
        lacking("bubblewrap is not installed")


def test_when_ci_requires_isolation_a_missing_one_fails_the_test_saying_how_to_run_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE, "1")
    with pytest.raises(pytest.fail.Exception) as failed:
        lacking("bubblewrap is not installed")
    assert "isolation test cannot run: bubblewrap is not installed" in str(failed.value)
    assert "as root with bubblewrap installed" in str(failed.value)


def test_ci_requires_isolation_and_runs_the_suite_as_make_test() -> None:
    ci = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text()
    assert f"export {REQUIRE}=1" in ci and ci.rstrip().endswith("make test")
