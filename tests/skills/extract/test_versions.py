"""The library's side: new, automatically approved, new version or grown evidence."""

from __future__ import annotations

from skills.extract import extract
from tests.skills.extract.batches import KIND, NAME, NOW, SOURCE, only, outcome, sales_batch
from workflows.contracts.patterns import Skill, SkillMetrics


def test_a_confident_pattern_is_approved_automatically() -> None:
    batch = [outcome(i) for i in range(10)]
    skill = only(extract(batch, [], now=NOW, auto_approve=0.9))
    assert (skill.status, skill.confidence) == ("active", 1.0)
    assert skill.note == "approved automatically: confidence 1.00 ≥ 0.90"
    held = only(extract(sales_batch(), [], now=NOW, auto_approve=0.9))
    assert held.status == "candidate" and "awaiting approval" in held.note


def existing(version: int = 1, *, status: str = "active", source: str = SOURCE,
             succeeded: int = 8, used: int = 10) -> Skill:
    skill = only(extract(sales_batch(), [], now=NOW))
    assert skill.pattern.job is not None
    job = skill.pattern.job.model_copy(update={"source": source})
    return Skill.model_validate({
        **skill.model_dump(), "status": status,
        "pattern": {**skill.pattern.model_dump(), "version": version, "job": job.model_dump(),
                    "source_runs": ["old-run", "run-00"]},
        "metrics": SkillMetrics(used=used, succeeded=succeeded).model_dump()})


def test_the_same_job_again_grows_the_known_pattern() -> None:
    known = existing()
    batch = [outcome(i, run=f"new-{i}") for i in range(3)] + [outcome(3, run="run-00")]
    result = extract(batch, [known], now=NOW)
    assert result.new == [] and result.versions == []
    grown = result.updated[0]
    assert grown.skill_id == known.skill_id and grown.status == "active"
    assert (grown.metrics.evidence_successes, grown.metrics.evidence_failures) == (4, 0)
    assert grown.pattern.source_runs == ["old-run", "run-00", "new-0", "new-1", "new-2"]
    assert grown.updated_at == NOW and grown.metrics.used == 10


def test_a_different_job_becomes_a_candidate_version_after_the_highest() -> None:
    library = [existing(1, source="print('v1')\n", succeeded=7),
               existing(2, status="retired", source="print('v2')\n")]
    result = extract(sales_batch(), library, now=NOW, auto_approve=0.1)
    assert result.new == [] and result.updated == []
    version = result.versions[0]
    assert version.skill_id == f"{NAME}@v3" and version.status == "candidate"
    assert version.note.startswith(f"new version of {NAME}: its job differs from {NAME}@v1's")


def test_a_worse_job_than_the_active_version_makes_no_version() -> None:
    library = [existing(1, source="print('v1')\n", succeeded=9, used=10)]
    result = extract(sales_batch(), library, now=NOW)  # 70 % in the batch, 90 % active
    assert result.versions == [] and result.new == []
    assert result.skipped == [f"{KIND} (profile.py): a different job succeeded in 70% of the "
                              f"batch, below the 90% of the active {NAME}@v1; no new version"]


def test_a_family_all_retired_starts_again_with_the_next_number() -> None:
    library = [existing(1, status="retired"), existing(2, status="retired")]
    result = extract(sales_batch(), library, now=NOW)
    assert [s.skill_id for s in result.new] == [f"{NAME}@v3"]
    assert result.updated == []
