"""Suite files: what a valid suite holds, and every malformed one refused with a clear error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from activities.artifacts.s3 import S3ArtifactStore
from activities.artifacts.store import LocalArtifactStore
from workers.evaluation.configurations import (
    ABLATIONS,
    AblationError,
    Configuration,
    configurations,
    parse_ablations,
)
from workers.evaluation.runner import Evaluation
from workers.evaluation.suite import SuiteError, load_suite
from workers.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "examples" / "eval" / "plans-suite.json"


def write_suite(folder: Path, tasks: list[dict[str, Any]], **extra: Any) -> Path:
    (folder / "plan.json").write_text("{}")
    path = folder / "suite.json"
    path.write_text(json.dumps({"name": "t", "tasks": tasks, **extra}))
    return path


GOOD = {"id": "one", "level": 1, "plan": "plan.json",
        "expect": [{"path": "tasks.main.metrics.x", "value": 1.0, "abs_tol": 0.1}]}


def test_the_plan_suite_has_twenty_tasks_on_every_topic_and_level() -> None:
    suite, base = load_suite(SHIPPED)
    assert len(suite.tasks) >= 20
    assert {t.level for t in suite.tasks} == {1, 2, 3}
    topics = " ".join(t.topic for t in suite.tasks)
    for topic in ("statistics", "regression", "group comparison", "outliers", "time series",
                  "simulation"):
        assert topic in topics
    assert any(t.goal for t in suite.tasks) and base == SHIPPED.parent
    assert all(t.replay for t in suite.tasks if t.goal)  # runnable offline


@pytest.mark.parametrize(("change", "message"), [
    ({"expect": []}, "tasks.0 (one): no reference answer"),
    ({"plan": None}, "give either `plan`"),
    ({"goal": "Why?"}, "give either `plan`"),
    ({"level": 4}, "tasks.0 (one).level"),
    ({"abs_tol": 1}, "tasks.0 (one).abs_tol: Extra inputs are not permitted"),
    ({"expect": [{"path": "status", "value": "completed", "abs_tol": 0.1}]},
     "abs_tol and rel_tol go with a numeric value"),
    ({"expect": [{"path": "x", "value": 1, "rel_tol": -1}]}, "greater than or equal to 0"),
    ({"id": "Bad Id"}, "tasks.0 (Bad Id).id: String should match pattern"),
])
def test_a_malformed_task_is_refused_naming_it(tmp_path: Path, change: dict[str, Any],
                                               message: str) -> None:
    path = write_suite(tmp_path, [{**GOOD, **change}])
    with pytest.raises(SuiteError, match="invalid suite") as err:
        load_suite(path)
    assert message in str(err.value)


def test_files_ids_and_json_are_checked_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="tasks: Field required"):
        load_suite(_no_tasks(tmp_path))
    with pytest.raises(SuiteError, match="one appear twice"):
        load_suite(write_suite(tmp_path, [GOOD, GOOD]))
    with pytest.raises(SuiteError, match=r"task one: plan: 'gone\.json' does not exist"):
        load_suite(write_suite(tmp_path, [{**GOOD, "plan": "gone.json"}]))
    goal = {**GOOD, "plan": None, "goal": "Why?", "data": ["nope.csv"]}
    with pytest.raises(SuiteError, match=r"task one: data: 'nope\.csv' does not exist"):
        load_suite(write_suite(tmp_path, [goal]))
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x", "tasks": [')
    with pytest.raises(SuiteError, match="invalid JSON at line 1"):
        load_suite(broken)


def _no_tasks(folder: Path) -> Path:
    path = folder / "empty.json"
    path.write_text(json.dumps({"name": "t"}))
    return path


def test_ablations_are_the_known_parts_and_each_switches_its_own_off(tmp_path: Path) -> None:
    assert parse_ablations("memory, skills,memory") == ["memory", "skills"]
    assert parse_ablations("all") == list(ABLATIONS)
    assert parse_ablations(None) == []
    with pytest.raises(AblationError, match="unknown 'reviews'; known: skills, memory"):
        parse_ablations("skills,reviews")
    settings = Settings.model_validate({"anthropic_api_key": "k"})
    policies = {c.name: c.policy(settings) for c in configurations(list(ABLATIONS))}
    assert list(policies) == ["full", "no-skills", "no-memory", "no-debuggers",
                              "no-model-review"]
    switches = {name: (p.skills.enabled, p.memory.enabled, p.agents.debuggers,
                       p.agents.model_review) for name, p in policies.items()}
    assert switches == {"full": (True, True, True, True),
                        "no-skills": (False, True, True, True),
                        "no-memory": (True, False, True, True),
                        "no-debuggers": (True, True, False, True),
                        "no-model-review": (True, True, True, False)}
    replayed = Configuration("full").policy(Settings(data_dir=tmp_path), replay=ROOT
                                            / "examples" / "goal" / "recording.jsonl")
    assert replayed.agents.enabled and replayed.agents.recording is not None
    assert replayed.agents.recording.mode == "replay"


def test_parts_kept_off_are_off_in_every_configuration_the_base_included() -> None:
    configs = configurations(["memory", "debuggers"], ["skills"])
    assert [(c.name, c.off) for c in configs] == [
        ("no-skills", ("skills",)),
        ("no-skills+no-memory", ("skills", "memory")),
        ("no-skills+no-debuggers", ("skills", "debuggers"))]
    policies = [c.policy(Settings()) for c in configs]
    assert [p.skills.enabled for p in policies] == [False, False, False]
    assert [p.memory.enabled for p in policies] == [True, False, True]
    assert [p.agents.debuggers for p in policies] == [True, True, False]
    with pytest.raises(AblationError, match="--off: unknown 'skill'"):
        parse_ablations("skill", option="--off")


def test_an_evaluation_puts_its_inputs_in_the_store_the_pools_share(tmp_path: Path) -> None:
    suite, base = load_suite(ROOT / "examples" / "eval" / "plans-suite.json")
    local = Evaluation(suite, base, settings=Settings(data_dir=tmp_path), live=False)
    assert isinstance(local.store, LocalArtifactStore)
    shared = Evaluation(suite, base, live=False, settings=Settings(
        data_dir=tmp_path, store_url="s3://assay-artifacts/eval",
        store_endpoint_url="http://127.0.0.1:9"))
    assert isinstance(shared.store, S3ArtifactStore)  # what remote sandboxes read from
