"""The batch as cases: what counts, and how often."""

from __future__ import annotations

from skills.extract import extract
from tests.skills.extract.batches import NOW, only, outcome, sales_batch


def test_outcomes_without_a_resolved_job_or_with_no_verdict_do_not_count() -> None:
    batch = [outcome(i, source=None) for i in range(2)] + [outcome(5, "cancelled"),
                                                           outcome(6, "deferred")]
    batch += [outcome(i) for i in range(7, 10)]
    result = extract(batch, [], now=NOW)
    skill = only(result)
    assert (skill.metrics.evidence_successes, skill.metrics.evidence_failures) == (3, 0)
    assert result.skipped == ["2 outcome(s) had no resolved job (no source) and were not "
                              "considered"]


def test_a_repeated_outcome_counts_once() -> None:
    batch = sales_batch()
    skill = only(extract([*batch, *batch[:3]], [], now=NOW))
    assert (skill.metrics.evidence_successes, skill.metrics.evidence_failures) == (7, 3)
