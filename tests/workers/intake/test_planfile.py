"""Resolving plan files: everything wrong with a plan is reported before anything starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workers.intake.planfile import PlanFileError, load_plan, load_supplied_plan

LIMIT = 1_500_000


def write_plan(folder: Path, decisions: list[dict[str, Any]], **top: Any) -> Path:
    path = folder / "pending_actions.json"
    path.write_text(json.dumps({"decisions": decisions, **top}))
    return path


def decision(tid: str, **extra: Any) -> dict[str, Any]:
    return {"task_id": tid, "priority": "HIGH", "action": "analyse",
            "acceptance_criteria": ["works"], **extra}


def test_entry_and_inputs_are_resolved_and_fixed_by_checksum(tmp_path: Path) -> None:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "fit.py").write_text("print('fit')\n")
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    path = write_plan(tmp_path, [decision("1", job={"entry": "jobs/fit.py"},
                                          inputs=["data.csv"])])
    req = load_plan(path, max_bytes=LIMIT)
    assert req.plan is not None
    only = req.plan.decisions[0]
    assert only.job is not None
    assert (only.job.source, only.job.filename) == ("print('fit')\n", "fit.py")
    assert only.resolved_inputs[0].name == "data.csv"
    assert only.resolved_inputs[0].size == 8
    assert req.plan_name == tmp_path.name
    again = load_plan(path, max_bytes=LIMIT)
    assert again.plan_sha256 == req.plan_sha256
    (tmp_path / "jobs" / "fit.py").write_text("print('changed')\n")
    assert load_plan(path, max_bytes=LIMIT).plan_sha256 != req.plan_sha256


def test_inline_code_becomes_job_py(tmp_path: Path) -> None:
    path = write_plan(tmp_path, [decision("1", job={"code": "print(1)"})], meeting_id="m1")
    req = load_plan(path, max_bytes=LIMIT)
    assert req.plan_name == "m1"
    assert req.plan is not None and req.plan.decisions[0].job is not None
    assert req.plan.decisions[0].job.filename == "job.py"


def test_a_supplied_plan_is_resolved_exactly_like_a_run_plan(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    path = write_plan(tmp_path, [decision("1", job={"code": "print(1)"}, inputs=["data.csv"])])
    req = load_plan(path, max_bytes=LIMIT)
    supplied = load_supplied_plan(path, max_bytes=LIMIT, by="ada")
    assert (supplied.plan_name, supplied.plan_sha256, supplied.by) == (
        req.plan_name, req.plan_sha256, "ada")
    assert supplied.plan == req.plan
    with pytest.raises(PlanFileError, match="over the 200-byte limit"):
        load_supplied_plan(path, max_bytes=200)


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "invalid JSON at line 1, column 2"),
    ("[]", "invalid plan"),
    ('{"decisions": [{"task_id": 1}]}', "task 1 (decisions[0]), field priority: Field required"),
    (json.dumps({"decisions": [decision("1"), decision("1")]}), "task 1: duplicate task_id"),
    (json.dumps({"decisions": [decision("1", dependencies=["9"])]}),
     "task 1: unknown dependency '9'"),
    (json.dumps({"decisions": [decision("a", dependencies=["b"]),
                               decision("b", dependencies=["a"])]}),
     "dependency cycle among tasks: a, b, a"),
    (json.dumps({"decisions": [decision("1", job={"code": "x", "source": "y"})]}),
     "field job.source: set by Assay"),
    (json.dumps({"decisions": [decision("1", resolved_inputs=[])]}),
     "field resolved_inputs: set by Assay"),
])
def test_bad_plans_are_refused_with_a_clear_message(tmp_path: Path, content: str,
                                                    message: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(content)
    with pytest.raises(PlanFileError) as info:
        load_plan(path, max_bytes=LIMIT)
    assert message in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PlanFileError, match="no such plan file"):
        load_plan(tmp_path / "nope.json", max_bytes=LIMIT)


def test_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(PlanFileError, match="not UTF-8"):
        load_plan(path, max_bytes=LIMIT)


@pytest.mark.parametrize("entry", ["../outside.py", "/etc/passwd", "jobs/../../outside.py"])
def test_job_entry_outside_the_plan_folder_is_refused(tmp_path: Path, entry: str) -> None:
    inner = tmp_path / "plan"
    inner.mkdir()
    (tmp_path / "outside.py").write_text("print('escape')")
    path = write_plan(inner, [decision("1", job={"entry": entry})])
    with pytest.raises(PlanFileError, match="outside the plan's folder"):
        load_plan(path, max_bytes=LIMIT)


def test_symlink_escaping_the_plan_folder_is_refused(tmp_path: Path) -> None:
    inner = tmp_path / "plan"
    inner.mkdir()
    (tmp_path / "secret.csv").write_text("x")
    (inner / "data.csv").symlink_to(tmp_path / "secret.csv")
    path = write_plan(inner, [decision("1", job={"code": "x"}, inputs=["data.csv"])])
    with pytest.raises(PlanFileError, match=r"input 'data\.csv' is outside"):
        load_plan(path, max_bytes=LIMIT)


def test_missing_entry_and_input_are_named(tmp_path: Path) -> None:
    path = write_plan(tmp_path, [decision("1", job={"entry": "jobs/missing.py"})])
    with pytest.raises(PlanFileError, match=r"task 1: job entry 'jobs/missing\.py' not found"):
        load_plan(path, max_bytes=LIMIT)
    path = write_plan(tmp_path, [decision("1", job={"code": "x"}, inputs=["gone.csv"])])
    with pytest.raises(PlanFileError, match=r"task 1: input 'gone\.csv' not found"):
        load_plan(path, max_bytes=LIMIT)


def test_inputs_with_the_same_file_name_are_refused(tmp_path: Path) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "data.csv").write_text(sub)
    path = write_plan(tmp_path, [decision("1", job={"code": "x"},
                                          inputs=["a/data.csv", "b/data.csv"])])
    with pytest.raises(PlanFileError, match="two inputs share a file name"):
        load_plan(path, max_bytes=LIMIT)


def test_plan_over_the_payload_limit_is_refused(tmp_path: Path) -> None:
    big = "x = 1\n" * 400_000
    path = write_plan(tmp_path, [decision("1", job={"code": big})])
    with pytest.raises(PlanFileError, match="over the 1,500,000-byte limit"):
        load_plan(path, max_bytes=LIMIT)


def test_unreadable_plan_or_input_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PlanFileError, match="is a directory, not a plan file"):
        load_plan(tmp_path, max_bytes=LIMIT)
    (tmp_path / "data.csv").mkdir()
    path = write_plan(tmp_path, [decision("1", job={"code": "x"}, inputs=["data.csv"])])
    with pytest.raises(PlanFileError, match=r"input 'data\.csv' not found"):
        load_plan(path, max_bytes=LIMIT)


def test_inputs_are_put_in_the_artifact_store_under_their_pin(tmp_path: Path) -> None:
    from activities.artifacts.store import LocalArtifactStore

    store = LocalArtifactStore(tmp_path / "store")
    (tmp_path / "plan").mkdir()
    (tmp_path / "plan" / "data.csv").write_text("a,b\n1,2\n")
    path = write_plan(tmp_path / "plan", [decision("1", job={"code": "x"}, inputs=["data.csv"])])
    req = load_plan(path, max_bytes=LIMIT, store=store)
    assert req.plan is not None
    [pinned] = req.plan.decisions[0].resolved_inputs
    assert pinned.path == str(tmp_path / "plan" / "data.csv")  # a record, never opened later
    with store.open(pinned.sha256) as stored:
        assert stored.read() == b"a,b\n1,2\n"
    assert pinned.size == 8
    assert load_plan(path, max_bytes=LIMIT) == req  # storing changes nothing in the request


def test_a_store_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    from activities.artifacts.store import LocalArtifactStore

    (tmp_path / "not-a-dir").write_text("")
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    path = write_plan(tmp_path, [decision("1", job={"code": "x"}, inputs=["data.csv"])])
    with pytest.raises(PlanFileError, match=r"task 1: cannot read or store input 'data\.csv'.*"
                                            r"not-a-dir.*must be writable"):
        load_supplied_plan(path, max_bytes=LIMIT, store=LocalArtifactStore(
            tmp_path / "not-a-dir" / "store"))


def test_a_plan_s_environment_is_every_job_s_default(tmp_path: Path) -> None:
    path = write_plan(tmp_path, [decision("a", job={"code": "print(1)"}),
                                 decision("b", job={"code": "print(2)", "environment": "mine"}),
                                 decision("c")], environment="science")
    plan = load_plan(path, max_bytes=LIMIT).plan
    assert plan is not None
    jobs = {d.task_id: d.job for d in plan.decisions}
    assert jobs["a"] is not None and jobs["a"].environment == "science"
    assert jobs["b"] is not None and jobs["b"].environment == "mine"
    assert jobs["c"] is None


def test_a_hostile_plan_environment_is_refused(tmp_path: Path) -> None:
    path = write_plan(tmp_path, [decision("a", job={"code": "print(1)"})],
                      environment="../../etc")
    with pytest.raises(PlanFileError, match="environment"):
        load_plan(path, max_bytes=LIMIT)



def test_a_plan_s_alternatives_are_kept_with_its_metric(tmp_path: Path) -> None:
    sweep = [{"name": "lr-0.01", "kind": "optimisation", "set": {"args.lr": 0.01}},
             {"name": "lr-0.3", "kind": "optimisation", "set": {"args.lr": 0.3}}]
    path = write_plan(tmp_path, [decision("1", job={"code": "print(1)", "args": {"lr": 0.1}},
                                          branches=sweep)],
                      metric={"name": "r2", "direction": "maximize"})
    plan = load_plan(path, max_bytes=LIMIT).plan
    assert plan is not None and plan.metric is not None and plan.metric.name == "r2"
    assert [b.set for b in plan.decisions[0].branches] == [{"args.lr": 0.01}, {"args.lr": 0.3}]


@pytest.mark.parametrize(("branches", "message"), [
    ([{"name": "main", "set": {"args.lr": 1}}], "task 1: branch 'main': 'main' is the run's own"),
    ([{"name": "a", "set": {"args.lr": 1}}, {"name": "a", "set": {"args.lr": 2}}],
     "task 1: branch 'a': the name is already taken"),
    ([{"name": "a", "set": {"7:args.lr": 1}}], "names task '7', which the plan does not have"),
    ([{"name": "a", "set": {"args.lr": 1}, "code": 5}], "field branches.0.code"),
    ([{"name": "a/../../x", "set": {"args.lr": 1}}], "field branches.0.name"),
    ([{"name": "a", "set": {"args.lr": 1, "env.HOME": "/"}}], "field branches.0.set.env.HOME"),
    ([{"name": f"b{i}", "set": {"args.lr": i}} for i in range(21)], "field branches"),
    ("all of them", "field branches"),
])
def test_bad_alternatives_are_refused_before_anything_starts(
        tmp_path: Path, branches: Any, message: str) -> None:
    path = write_plan(tmp_path, [decision("1", job={"code": "print(1)"}, branches=branches)])
    with pytest.raises(PlanFileError) as info:
        load_plan(path, max_bytes=LIMIT)
    assert message in str(info.value) and str(path) in str(info.value)


def test_alternatives_changing_a_job_the_coder_writes_are_refused(tmp_path: Path) -> None:
    path = write_plan(tmp_path, [decision("1", branches=[{"name": "a", "set": {"args.lr": 1}}])])
    with pytest.raises(PlanFileError, match=r"task 1: branch 'a': cannot set args\.lr of task 1: "
                                            r"the coder writes its job when the task runs"):
        load_plan(path, max_bytes=LIMIT)
    supplied = write_plan(tmp_path, [decision("1", branches=[{"name": "a", "code": "x"}])])
    with pytest.raises(PlanFileError, match=r"`code` replaces the task's job"):
        load_supplied_plan(supplied, max_bytes=LIMIT, by="ada")
