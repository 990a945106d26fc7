"""The built-in library: loaded like any import, and its job scripts run."""

from __future__ import annotations

import json
import math
import os
import random
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from skills.builtin import builtin_dir, builtin_skills
from skills.folders import export_skills

BUILTINS = ["compare-two-groups", "correlation-matrix", "describe-column", "find-outliers",
            "linear-regression", "profile-table"]


def test_builtins_load_as_active_validated_skills() -> None:
    skills = builtin_skills()
    assert [s.pattern.name for s in skills] == BUILTINS
    for skill in skills:
        pattern, job = skill.pattern, skill.pattern.job
        assert (skill.status, skill.origin, skill.confidence) == ("active", "builtin", 1.0)
        assert job is not None and job.source and job.filename
        assert job.source == (builtin_dir() / pattern.name / "scripts" / job.filename).read_text()
        assert pattern.checks and pattern.parameters and job.expected_artifacts
        assert pattern.preconditions.input_types == ["csv"]
        assert set(job.args) == {p.name for p in pattern.parameters}
        assert all(p.problem(p.default) is None for p in pattern.parameters
                   if p.default is not None)
        assert all(p.name in job.args for p in pattern.parameters)
        assert set(pattern.preconditions.imports) <= set(sys.stdlib_module_names)


def test_builtin_folders_are_what_export_writes(tmp_path: Path) -> None:
    for folder in export_skills(builtin_skills(), tmp_path):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            shipped = builtin_dir() / folder.name / path.relative_to(folder)
            assert shipped.read_bytes() == path.read_bytes(), shipped


def run_builtin(name: str, cwd: Path, **args: object) -> dict[str, Any]:
    """Run a built-in's script the way the sandbox does and return its metrics."""
    skill = next(s for s in builtin_skills() if s.pattern.name == name)
    job = skill.pattern.job
    assert job is not None and job.filename is not None
    merged = {**job.args, **args}
    flags = [f"--{k}={json.dumps(v) if isinstance(v, bool) else v}" for k, v in merged.items()]
    script = builtin_dir() / name / "scripts" / job.filename
    done = subprocess.run([sys.executable, str(script), *flags], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    metrics: dict[str, Any] = json.loads((cwd / "metrics.json").read_text())
    assert set(job.expected_metrics) <= set(metrics)
    for artifact in job.expected_artifacts:
        assert json.loads((cwd / artifact).read_text())
    for check in skill.pattern.checks:
        assert check.holds(metrics[check.metric]), check.describe()
    return metrics


def write_csv(path: Path, header: list[str], rows: Sequence[Sequence[object]]) -> None:
    lines = [",".join(header), *(",".join(str(c) for c in row) for row in rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_builtin_profile_table(tmp_path: Path) -> None:
    write_csv(tmp_path / "data.csv", ["id", "size", "colour"],
              [[1, 2.5, "red"], [2, "NA", "blue"], [3, 4.0, ""], [3, 4.0, ""], [4, 1.0, "red"]])
    metrics = run_builtin("profile-table", tmp_path)
    assert metrics == {"rows": 5, "columns": 3, "missing_values": 3, "complete_rows": 2,
                       "duplicate_rows": 1, "numeric_columns": 2, "text_columns": 1}
    profile = json.loads((tmp_path / "profile.json").read_text())
    assert profile["column_summaries"]["size"]["median"] == 3.25
    assert profile["column_summaries"]["colour"]["top"][0] == {"value": "red", "count": 2}


def test_builtin_describe_column(tmp_path: Path) -> None:
    write_csv(tmp_path / "data.csv", ["value"], [[v] for v in [*range(1, 10), "NA"]])
    metrics = run_builtin("describe-column", tmp_path)
    assert (metrics["n"], metrics["missing"], metrics["mean"], metrics["median"]) == (9, 1, 5, 5)
    assert (metrics["q1"], metrics["q3"], metrics["skewness"]) == (3, 7, 0)
    assert metrics["sd"] == round(statistics.stdev(range(1, 10)), 6)


def test_builtin_compare_two_groups(tmp_path: Path) -> None:
    rng = random.Random(3)
    rows = [[g, round(rng.gauss(mean, 1.0), 4)] for g, mean in (("a", 0.0), ("b", 0.1))
            for _ in range(2000)]
    write_csv(tmp_path / "data.csv", ["group", "value"], rows)
    metrics = run_builtin("compare-two-groups", tmp_path, permutations=200)
    assert (metrics["n_a"], metrics["n_b"]) == (2000, 2000)
    normal_p = math.erfc(abs(metrics["t_statistic"]) / math.sqrt(2))  # df ~ 4000: t ~ normal
    assert metrics["welch_p_value"] == pytest.approx(normal_p, rel=0.01)
    again = run_builtin("compare-two-groups", tmp_path, permutations=200)
    assert again["p_value"] == metrics["p_value"]  # seeded
    write_csv(tmp_path / "data.csv", ["group", "value"],
              [["x", v] for v in range(10)] + [["y", v + 20] for v in range(10)])
    separated = run_builtin("compare-two-groups", tmp_path, permutations=999)
    assert separated["p_value"] == 1 / 1000
    assert separated["welch_p_value"] < 1e-10 and separated["mean_difference"] == -20


def test_builtin_linear_regression(tmp_path: Path) -> None:
    xs = [float(x) for x in range(1, 21)]
    ys = [2.0 * x + 1.0 + (0.5 if x % 2 else -0.5) * (x % 3) for x in xs]
    write_csv(tmp_path / "data.csv", ["x", "y"], [*zip(xs, ys, strict=True), ["", 3]])
    metrics = run_builtin("linear-regression", tmp_path)
    expected = statistics.linear_regression(xs, ys)
    assert metrics["slope"] == pytest.approx(expected.slope, abs=1e-6)
    assert metrics["intercept"] == pytest.approx(expected.intercept, abs=1e-6)
    assert metrics["r_squared"] == pytest.approx(statistics.correlation(xs, ys) ** 2, abs=1e-6)
    assert (metrics["n"], metrics["dropped_rows"]) == (20, 1)
    finding = json.loads((tmp_path / "regression.json").read_text())
    low, high = finding["slope_ci95"]
    assert low < expected.slope < high


def test_builtin_correlation_matrix(tmp_path: Path) -> None:
    xs = list(range(1, 11))
    write_csv(tmp_path / "data.csv", ["x", "cube", "neg", "const"],
              [[x, x**3, -x, 1] for x in xs])
    pearson = run_builtin("correlation-matrix", tmp_path)
    assert (pearson["columns"], pearson["pairs"], pearson["rows_used"]) == (3, 3, 10)
    assert pearson["max_abs_r"] == 1.0 and pearson["strongest_pair"] == "x~neg"
    run_builtin("correlation-matrix", tmp_path, method="spearman")
    matrix = json.loads((tmp_path / "correlations.json").read_text())["matrix"]
    assert matrix["x"]["cube"] == 1.0 and matrix["cube"]["neg"] == -1.0


def test_builtin_find_outliers(tmp_path: Path) -> None:
    write_csv(tmp_path / "data.csv", ["value"], [[v] for v in [*range(1, 11), 100, "NA"]])
    metrics = run_builtin("find-outliers", tmp_path)
    assert (metrics["n"], metrics["missing"], metrics["outliers"]) == (11, 1, 1)
    listed = json.loads((tmp_path / "outliers.json").read_text())["listed"]
    assert listed == [{"line": 12, "value": 100.0, "side": "high"}]


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_scripts_explain_bad_input(tmp_path: Path, name: str) -> None:
    skill = next(s for s in builtin_skills() if s.pattern.name == name)
    assert skill.pattern.job is not None and skill.pattern.job.filename is not None
    script = builtin_dir() / name / "scripts" / skill.pattern.job.filename
    done = subprocess.run([sys.executable, str(script), "--data=absent.csv"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert "input 'absent.csv' not found" in done.stderr
    assert not os.path.exists(tmp_path / "metrics.json")
