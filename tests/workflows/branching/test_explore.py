"""A plan's alternatives (``branches`` on its tasks) are checked before anything runs."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from workflows.branching.explore import check_explore
from workflows.contracts.alternatives import MAX_BRANCHES
from workflows.contracts.plan import Plan, PlanError, check_graph

JOB = {"code": "print('fit')", "args": {"lr": 0.1}}


def task(tid: str, *deps: str, job: dict[str, Any] | None = None,
         branches: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"task_id": tid, "priority": "HIGH", "action": f"step {tid}",
                             "acceptance_criteria": ["done"], "dependencies": list(deps)}
    if job is not None:
        found["job"] = job
    if branches is not None:
        found["branches"] = branches
    return found


def branch(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "kind": "optimisation", **extra}


def sweep(*values: float, prefix: str = "lr") -> list[dict[str, Any]]:
    return [branch(f"{prefix}-{v}", set={"args.lr": v}) for v in values]


def check(*tasks: dict[str, Any], **top: Any) -> None:
    plan = Plan.model_validate({"decisions": list(tasks), **top})
    check_explore(plan, check_graph(plan))


def refused(*tasks: dict[str, Any], **top: Any) -> str:
    with pytest.raises(PlanError) as info:
        check(*tasks, **top)
    return str(info.value)


# A diamond: 1 -> 2 -> 4, 1 -> 3 -> 4, and 5 beside it all.
def diamond(two: list[dict[str, Any]], *, jobs: bool = True) -> list[dict[str, Any]]:
    job = JOB if jobs else None
    return [task("1", job=JOB), task("2", "1", job=JOB, branches=two),
            task("3", "1", job=JOB), task("4", "2", "3", job=job), task("5", job=JOB)]


def test_a_sweep_with_downstream_changes_and_code_is_accepted() -> None:
    check(*diamond([*sweep(0.01, 0.3),
                    branch("deeper", kind="hypothesis", hypothesis="more epochs help",
                           set={"args.lr": 0.05, "4:args.epochs": 10,
                                "4:resources.timeout_s": 120, "2:resources.cpus": 2}),
                    branch("mine", kind="human", code="print('my fit')")]),
          metric={"name": "r2", "direction": "maximize"})


def test_a_plan_without_branches_passes_untouched() -> None:
    check(*diamond([]))
    check(task("1"))  # a task without a job and without branches is the coder's, as always


@pytest.mark.parametrize(("tasks", "message"), [
    ([task("1", job=JOB, branches=sweep(0.1, 0.1))],
     "task 1: branch 'lr-0.1': the name is already taken by a branch of task 1"),
    ([task("1", job=JOB, branches=sweep(0.1)), task("2", "1", job=JOB, branches=sweep(0.1))],
     "task 2: branch 'lr-0.1': the name is already taken by a branch of task 1; branch names "
     "must be unique across the plan"),
    ([task("1", job=JOB, branches=[branch("A", set={"args.lr": 1}),
                                   branch("a", set={"args.lr": 2})])],
     "branch 'a': the name is already taken"),
])
def test_branch_names_are_unique_across_the_plan(tasks: list[dict[str, Any]],
                                                 message: str) -> None:
    assert message in refused(*tasks)


@pytest.mark.parametrize("name", ["main", "MAIN", "Main"])
def test_the_main_line_s_name_is_reserved(name: str) -> None:
    message = refused(task("1", job=JOB, branches=[branch(name, set={"args.lr": 1})]))
    assert f"task 1: branch {name!r}: 'main' is the run's own line" in message


@pytest.mark.parametrize(("path", "message"), [
    ("3:args.lr", "'3:args.lr' changes task 3, which is not downstream of task 2, so the "
                  "branch does not run it"),
    ("1:args.lr", "changes task 1, which is not downstream of task 2"),  # upstream
    ("5:args.lr", "changes task 5, which is not downstream of task 2"),  # beside
    ("9:args.lr", "'9:args.lr' names task '9', which the plan does not have"),
])
def test_a_change_to_a_task_the_branch_does_not_run_is_refused(path: str, message: str) -> None:
    text = refused(*diamond([branch("b", set={path: 1})]))
    assert text.startswith("task 2: branch 'b': ") and message in text


def test_the_branch_point_may_be_named_with_its_own_prefix_but_not_twice() -> None:
    check(*diamond([branch("b", set={"2:args.lr": 0.5})]))
    message = refused(*diamond([branch("b", set={"args.lr": 0.5, "2:args.lr": 0.7})]))
    assert "task 2: branch 'b' sets args.lr of task 2 twice" in message


@pytest.mark.parametrize("path", ["args.lr", "resources.memory_mb"])
def test_changing_a_job_the_coder_writes_at_run_time_is_refused(path: str) -> None:
    message = refused(task("1", branches=[branch("b", set={path: 512})]))
    assert f"task 1: branch 'b': cannot set {path} of task 1" in message
    assert "the coder writes its job when the task runs" in message
    assert "--from 1:execute" in message


def test_a_downstream_task_without_a_job_cannot_be_changed_either() -> None:
    message = refused(*diamond([branch("b", set={"4:args.epochs": 3})], jobs=False))
    assert "task 2: branch 'b': cannot set args.epochs of task 4" in message


def test_code_for_a_task_without_a_job_is_refused_and_says_why() -> None:
    message = refused(task("1", branches=[branch("mine", code="print(1)")]))
    assert "task 1: branch 'mine': `code` replaces the task's job" in message
    assert "the plan gives the task none to replace" in message
    assert "--from 1:execute" in message


def test_a_branch_that_changes_nothing_or_repeats_a_sibling_is_refused() -> None:
    assert "task 1: branch 'same' changes nothing" in refused(
        task("1", job=JOB, branches=[branch("same")]))
    twins = [branch("x", set={"args.lr": 0.1, "args.k": 2}),
             branch("y", set={"args.k": 2, "args.lr": 0.1})]
    assert "task 1: branch 'y' makes the same changes as branch 'x'" in refused(
        task("1", job=JOB, branches=twins))
    # Same values of different types are different changes.
    check(task("1", job=JOB, branches=[branch("x", set={"args.k": 1}),
                                       branch("y", set={"args.k": "1"})]))


@pytest.mark.parametrize(("value", "message"), [
    ("lots", "task 1: branch 'b': cannot set resources.memory_mb of task 1: "
             "resources.memory_mb must be a number, not 'lots'"),
    (True, "resources.memory_mb must be a number, not True"),
    (-5, "cannot set resources.memory_mb of task 1: 1 validation error for Resources "
         "memory_mb"),
])
def test_resource_values_of_the_wrong_kind_are_refused(value: Any, message: str) -> None:
    assert message in refused(task("1", job=JOB,
                                   branches=[branch("b", set={"resources.memory_mb": value})]))


def test_a_plan_holds_at_most_max_branches_from_the_start() -> None:
    half = MAX_BRANCHES // 2
    fine = [task("1", job=JOB, branches=sweep(*range(half), prefix="a")),
            task("2", "1", job=JOB, branches=sweep(*range(MAX_BRANCHES - half), prefix="b"))]
    check(*fine)
    fine[1]["branches"].append(branch("one-more", set={"args.lr": -1}))
    message = refused(*fine)
    assert f"the plan explores {MAX_BRANCHES + 1} branches (tasks 1, 2); at most " \
           f"{MAX_BRANCHES} may run from the start" in message


@pytest.mark.parametrize("bad", [
    {"name": "../etc"}, {"name": ""}, {"name": "x" * 49}, {"name": "a b"},
    {"name": "ok", "set": {"args.lr;rm -rf /": 1}}, {"name": "ok", "set": {"../x": 1}},
    {"name": "ok", "set": {"env.PATH": "/evil"}}, {"name": "ok", "set": {"resources.gpus": 4}},
    {"name": "ok", "set": {"args.lr": [1, 2]}}, {"name": "ok", "set": {"args.lr": {"a": 1}}},
    {"name": "ok", "kind": "exploit"}, {"name": "ok", "code": ""},
    {"name": "ok", "set": {"args.lr": 1}, "extra": True},
])
def test_malformed_branches_are_refused_by_the_schema(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Plan.model_validate({"decisions": [task("1", job=JOB, branches=[bad])]})
