"""The shipped goal suite: thirty-odd goals at three levels, their tables reproducible and
their references recomputed, in the science environment, by a script that never runs Assay.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from workers.evaluation.suite import load_suite
from workers.settings import Settings

EVAL = Path(__file__).resolve().parents[2] / "examples" / "eval"
SUITE, BASE = load_suite(EVAL / "suite.json")
OWN = [t for t in SUITE.tasks if t.data and t.data[0].startswith("tables/")]


@pytest.fixture(scope="module")
async def science(shared_environments: Path) -> Path:
    """The science environment's interpreter, provisioned once per test session."""
    environments = Settings(environments_root=shared_environments).environments()
    prepared = await environments.prepare("science", [])
    return await environments.ensure(prepared) / "bin" / "python"


def test_the_suite_is_thirty_goals_at_three_levels_each_with_a_format_and_labels() -> None:
    assert len(OWN) >= 30 and all(t.goal and not t.plan for t in OWN)
    levels = Counter(t.level for t in OWN)
    assert set(levels) == {1, 2, 3} and min(levels.values()) >= 10
    assert all(t.answer_format and t.labels for t in OWN)
    assert "goals/*/task.json" in json.loads((EVAL / "suite.json").read_text())["include"]


@pytest.mark.integration
@pytest.mark.timeout(900)
async def test_every_reference_is_what_numpy_scipy_and_statsmodels_compute(
        science: Path) -> None:
    done = subprocess.run([str(science), str(EVAL / "references.py")], capture_output=True,
                          text=True, timeout=300, check=True)
    computed = json.loads(done.stdout)
    assert {t.id: t.labels for t in OWN} == computed


@pytest.mark.integration
@pytest.mark.timeout(900)
async def test_the_tables_are_what_make_tables_writes(science: Path, tmp_path: Path) -> None:
    shutil.copyfile(EVAL / "make_tables.py", tmp_path / "make_tables.py")
    subprocess.run([str(science), str(tmp_path / "make_tables.py")], check=True, timeout=300)
    written = sorted((tmp_path / "tables").iterdir())
    shipped = sorted((EVAL / "tables").iterdir())
    assert [p.name for p in written] == [p.name for p in shipped]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(written, shipped, strict=True))


def test_offline_the_goals_without_a_recording_are_skipped_saying_why(tmp_path: Path) -> None:
    from workers.evaluation.configurations import Configuration
    from workers.evaluation.runner import Evaluation

    said: list[str] = []
    evaluation = Evaluation(SUITE, BASE, settings=Settings(data_dir=tmp_path), live=False,
                            echo=said.append)
    evaluation.prepare([Configuration("full")])
    assert {task for _, task in evaluation.skipped} == {t.id for t in OWN}
    assert {task for _, task in evaluation.requests} == {
        t.id for t in SUITE.tasks if t.replay}  # the included goals' recordings replay
    assert len(said) == len(OWN) and all("no model key, and no recording" in s for s in said)
