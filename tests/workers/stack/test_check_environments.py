"""``assay check`` has one line on job environments: named sets, provisioned ones, uv."""

from __future__ import annotations

from pathlib import Path

import pytest
import uv

from tests.activities.environments.wheels import tiny_wheelhouse
from workers.settings import Settings
from workers.stack.host import environments_item


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Offline settings (a tiny wheelhouse) whose operator names ``tiny``."""
    named = tmp_path / "named"
    named.mkdir()
    (named / "tiny.txt").write_text("alpha\n")
    return Settings(data_dir=tmp_path / "assay", environments_dir=named,
                    wheelhouse_dir=tiny_wheelhouse(tmp_path))


async def test_the_line_names_the_sets_counts_the_provisioned_and_finds_uv(
        settings: Settings) -> None:
    before = environments_item(settings)
    assert before.ok and before.name == "environments"
    assert before.detail.startswith("named sets: science, tiny; 0 provisioned (0.0 MiB) in ")
    assert f"uv at {uv.find_uv_bin()}" in before.detail

    await settings.environments().prepare("tiny", [])
    after = environments_item(settings)
    assert "; 1 provisioned (" in after.detail
    assert str(settings.provisioned_dir) in after.detail


def test_without_uv_the_line_is_down_and_says_what_is_refused(
        settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> str:
        raise FileNotFoundError("no uv")

    monkeypatch.setattr(uv, "find_uv_bin", missing)
    item = environments_item(settings)
    assert not item.ok
    assert "uv is missing, so jobs naming an environment are refused" in item.detail
