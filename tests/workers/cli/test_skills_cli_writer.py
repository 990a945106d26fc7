"""``assay skills show`` says what the skill writer said and what a skill was grouped from."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skills.extract import extract
from skills.revise import SkillRevisions
from skills.store import SkillStore
from tests.skills.extract.batches import NOW
from tests.skills.extract.test_cases import study_outcome
from tests.workers.cli.test_skills_cli import skills_cli
from tests.workflows.contracts.test_kinds import OLS
from workflows.contracts.patterns import Skill
from workflows.contracts.roles import Spend
from workflows.contracts.writing import ReviseInput, SkillWritingOutput, WriteSkillAnswer

pytestmark = pytest.mark.integration
WARNING = ("Only for ordinary least squares: the batch's boosting and spline tasks are other "
           "analyses and were not learnt from.")
WRITTEN = SkillWritingOutput(
    why_it_works="A linear fit with a held-out split reports an honest R².",
    when_it_fails=WARNING, description="Fits ordinary least squares to housing prices.",
    applicability="Linear models of a CSV table.", kind="skill",
    kind_reason="a stateless job run as given")


async def written_skill(url: str) -> Skill:
    """A skill extracted from three least-squares tasks, written, then approved."""
    (made,) = extract([study_outcome(n, "ordinary least squares", OLS) for n in range(3)],
                      [], now=NOW).new
    async with SkillStore(url) as store:
        await store.add(made, by="extraction")
        await SkillRevisions(store).revise_skills(ReviseInput(writings=[WriteSkillAnswer(
            skill_id=made.skill_id, writing=WRITTEN, spend=Spend(role="skill_writer"))]))
        await store.set_status(made.skill_id, "active", by="tester")  # the note is replaced
    return made


def test_show_prints_the_writers_explanation_warning_and_the_grouping(
        fresh_database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    made = asyncio.run(written_skill(fresh_database_url))
    monkeypatch.setenv("ASSAY_DATABASE_URL", fresh_database_url)
    monkeypatch.setenv("ASSAY_DATA_DIR", str(tmp_path / "assay"))

    result = skills_cli("show", made.skill_id)
    assert result.exit_code == 0, result.output
    fields = {name.strip(): value.strip() for name, sep, value in
              (line.partition(":") for line in result.stdout.splitlines()
               if not line.startswith(" ")) if sep}
    assert fields["writer explains"] == WRITTEN.why_it_works
    assert fields["writer warns"] == WARNING
    assert fields["writer's kind"] == "a stateless job run as given"
    assert fields["grouped"] == (
        "Task type: regression.linear:sklearn|csv|r2. Grouped from 3 successful and 0 failed "
        "tasks because they share the kind regression.linear:sklearn|csv|r2: analysis "
        "regression.linear (its job calls sklearn.linear_model.LinearRegression); libraries "
        "sklearn; data csv; metrics r2.")
