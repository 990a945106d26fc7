"""The Grafana dashboard in ``deploy/grafana``: valid, and about metrics the workers export."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from activities.metrics.definitions import REGISTRY, SDK_METRICS, series_names
from tests.e2e.test_metrics_e2e import prometheus_binary

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "assay.json"
METRIC = re.compile(r"\bassay_[a-z0-9_]+\b")
GRAFANA_RANGES = {"$__rate_interval": "5m", "$__range": "1h", "$__interval": "1m"}


def panels() -> list[dict[str, Any]]:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))["panels"]


def expressions() -> list[str]:
    return [t["expr"] for p in panels() for t in p.get("targets", [])]


def test_the_dashboard_is_grafana_json_with_unique_panels_on_the_grid() -> None:
    board = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert board["uid"] and board["title"] and board["schemaVersion"] >= 30
    ids = [p["id"] for p in panels()]
    assert len(ids) == len(set(ids))
    for panel in panels():
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        if panel["type"] != "row":
            refs = [t["refId"] for t in panel["targets"]]
            assert refs and len(refs) == len(set(refs)), panel["title"]


def test_every_metric_the_dashboard_uses_is_exported_and_every_one_is_shown() -> None:
    used = {name for expr in expressions() for name in METRIC.findall(expr)}
    assert used - series_names() == set()
    shown = {re.sub(r"_(total|bucket|sum|count)$", "", name) for name in used}
    assert {f.name for f in REGISTRY.collect()} - shown == set()
    assert set(SDK_METRICS) - shown == set()


def test_every_expression_is_valid_promql() -> None:
    """Checked by ``promtool`` (Debian's prometheus package) as recording rules."""
    promtool = prometheus_binary("promtool")
    rules: list[dict[str, str]] = []
    for n, expr in enumerate(expressions()):
        for variable, value in GRAFANA_RANGES.items():
            expr = expr.replace(variable, value)
        rules.append({"record": f"assay:dashboard:{n}", "expr": expr})
    check = subprocess.run([promtool, "check", "rules", "/dev/stdin"], capture_output=True,
                           text=True, input=json.dumps({"groups": [
                               {"name": "dashboard", "rules": rules}]}), check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"{len(rules)} rules found" in check.stdout
