"""A goal that matched nothing is reformulated once by the skill writer and matched again.

With a model, the library is asked a second time in the writer's words and the skill it
finds supplies the plan (no planning call). A writer that refuses is a recorded miss and the
run plans as it did before; without a model the writer is never asked.
"""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.histories.capture.writer import GOAL, QUERY, Reformulating, run_reformulated
from workflows.library.contracts import MatchAnswer
from workflows.library.patterns import GuidelineRef
from workflows.research.skills import merged_answer


async def test_a_reformulated_goal_finds_the_skill_that_supplies_the_plan(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    library = Reformulating()
    result = await run_reformulated(time_env, tmp_path, library)
    assert library.asked == [GOAL, QUERY]
    assert library.reformulated == [GOAL]
    assert [t.task_id for t in result.tasks] == ["skill-1"]
    assert result.skills.applied == {"skill-1": "group-means@v1"}
    assert result.skills.misses == 0 and "goal" not in result.skills.reasons
    assert result.model.calls_by_role.get("query_reformulator") == 1
    assert "planner" not in result.model.calls_by_role


async def test_a_refused_reformulation_is_a_miss_and_the_run_plans_as_before(
        time_env: WorkflowEnvironment, tmp_path: Path) -> None:
    library = Reformulating(refuse=True)
    result = await run_reformulated(time_env, tmp_path, library)
    assert library.asked == [GOAL, None], "the goal once, then the planner's jobless tasks"
    assert library.reformulated == [GOAL]
    assert result.skills.misses == 1
    assert any("was not reformulated" in w and "refused" in w for w in result.skills.warnings)
    assert result.skills.reasons["goal"].startswith("no skill above similarity")
    assert sorted(t.task_id for t in result.tasks) == ["fit", "load"], "the planner's plan ran"
    assert result.model.calls_by_role.get("planner") == 1


def test_what_the_reworded_match_found_joins_the_first_answer_guidelines_included() -> None:
    guide = GuidelineRef(skill_id="notes@v1", name="notes", score=0.8)
    first = MatchAnswer(reasons={"goal": "no skill above similarity 0.35", "t2": "kept"},
                        unmatched=["goal"])
    second = MatchAnswer(guidelines={"goal": [guide]}, reasons={"goal": "below confidence"})
    merged = merged_answer(first, second, ["goal"])
    assert merged.guidelines == {"goal": [guide]}  # reaches the planner's prompt
    assert merged.reasons == {"t2": "kept", "goal": "below confidence"}
    assert merged.unmatched == [] and first.guidelines == {}
