"""Job arguments: what ``execve`` can start a program with passes, nothing else does."""

from __future__ import annotations

import pytest

from workflows.contracts.arguments import MAX_ARG_BYTES, MAX_ARGS_BYTES, check_job_args
from workflows.contracts.base import Scalar
from workflows.contracts.plan import JobSpec


def test_an_argument_at_the_kernels_limit_passes_and_one_byte_more_does_not() -> None:
    room = MAX_ARG_BYTES - len("--x=") - 1  # the NUL that ends it counts
    check_job_args({"x": "y" * room})
    with pytest.raises(ValueError, match="in one argument"):
        check_job_args({"x": "y" * (room + 1)})
    with pytest.raises(ValueError, match="in one argument"):  # bytes, not characters
        check_job_args({"x": "é" * room})


def test_all_arguments_together_are_bounded() -> None:
    each = MAX_ARG_BYTES - 100
    many: dict[str, Scalar] = {f"k{i}": "y" * each for i in range(MAX_ARGS_BYTES // each + 1)}
    with pytest.raises(ValueError, match="in all"):
        check_job_args(many)


@pytest.mark.parametrize("value", ["a\x00b", "\x00"])
def test_a_nul_byte_is_refused_where_the_plan_is_read(value: str) -> None:
    with pytest.raises(ValueError, match="NUL byte"):
        JobSpec(code="pass", args={"x": value})
    JobSpec(code="pass", args={"x": "tabs\tand\nlines", "n": 3, "flag": True})
