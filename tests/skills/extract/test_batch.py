"""One batch in, an Extraction out: one pattern per task type, in any order."""

from __future__ import annotations

import random

import pytest

from skills.extract import extract
from tests.skills.extract.batches import KIND, NOW, only, outcome, sales_batch


def test_one_pattern_per_task_type_the_best_supported_job_wins() -> None:
    batch = ([outcome(i, filename="a.py") for i in range(3)]
             + [outcome(3 + i, filename="b.py") for i in range(4)])
    result = extract(batch, [], now=NOW)
    skill = only(result)
    assert skill.pattern.job is not None and skill.pattern.job.filename == "b.py"
    assert result.skipped == [f"{KIND} (a.py): 3 successes, but {KIND} (b.py) of the same "
                              "task type had more support; one pattern per task type and batch"]


def test_auto_approve_outside_its_range_is_refused() -> None:
    with pytest.raises(ValueError, match="auto_approve"):
        extract(sales_batch(), [], now=NOW, auto_approve=1.5)


def test_the_same_batch_in_any_order_gives_the_same_patterns() -> None:
    batch = sales_batch() + [outcome(20 + i, action="Train the demand model") for i in range(3)]
    first = extract(batch, [], now=NOW)
    shuffled = list(batch)
    random.Random(7).shuffle(shuffled)
    second = extract(shuffled, [], now=NOW)
    assert [s.model_dump() for s in first.new] == [s.model_dump() for s in second.new]
    assert first.skipped == second.skipped
    assert [s.pattern.name for s in first.new] == sorted(s.pattern.name for s in first.new)
    assert len(first.new) == 2
