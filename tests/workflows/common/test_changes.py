"""A branch's ``set`` applied to a job: what changes, what is widened, what is refused."""

from __future__ import annotations

import pytest

from workflows.common.changes import ChangeRefusedError, apply_sets
from workflows.common.guard import check_change
from workflows.contracts.plan import JobSpec
from workflows.contracts.policy import ReviewPolicy

JOB = JobSpec.model_validate({"code": "print(1)\n", "args": {"lr": 0.1, "steps": 25},
                              "expected_artifacts": ["out.txt"]})


def test_a_whole_number_for_a_float_argument_is_taken_as_a_float() -> None:
    job, changes = apply_sets(JOB, {"args.lr": 1, "args.steps": 50}, "fit")
    assert job.args == {"lr": 1.0, "steps": 50}
    assert type(job.args["lr"]) is float and type(job.args["steps"]) is int
    assert [(c.field, c.old, c.new) for c in changes] == [("args.lr", 0.1, 1.0),
                                                          ("args.steps", 25, 50)]
    assert check_change(JOB, job, ReviewPolicy()) == []


@pytest.mark.parametrize(("sets", "expected"), [
    ({"args.steps": 2.5}, "changes type from int to float"),
    ({"args.lr": True}, "changes type from float to bool"),
    ({"args.lr": "fast"}, "changes type from float to str"),
])
def test_other_type_changes_are_still_refused(sets: dict[str, float | bool | str],
                                              expected: str) -> None:
    job, _ = apply_sets(JOB, sets, "fit")
    assert any(expected in reason for reason in check_change(JOB, job, ReviewPolicy()))


def test_a_resource_must_be_a_number_in_range() -> None:
    with pytest.raises(ChangeRefusedError, match="must be a number"):
        apply_sets(JOB, {"resources.memory_mb": "lots"}, "fit")
    with pytest.raises(ChangeRefusedError, match="task fit"):
        apply_sets(JOB, {"resources.timeout_s": -1}, "fit")
