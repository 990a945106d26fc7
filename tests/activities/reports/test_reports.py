"""The Markdown report: goal, answer and model use next to the tasks and their provenance."""

from __future__ import annotations

from datetime import UTC, datetime

from activities.reports.markdown import SKILL_REASONS_SHOWN, describe_spend, render_markdown
from workflows.agents.roles import RunAnswer
from workflows.agents.spend import ModelSpend, Spend, Usage
from workflows.contracts.results import Provenance, RunReport, TaskResult
from workflows.library.contracts import SkillSummary

WHEN = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def usage(inp: int, out: int, write: int = 0, read: int = 0, cost: float = 0.0) -> Usage:
    return Usage(input_tokens=inp, output_tokens=out, cache_creation_input_tokens=write,
                 cache_read_input_tokens=read, cost_usd=cost)


def task(tid: str, status: str = "completed", author: str = "plan",
         spend: ModelSpend | None = None) -> TaskResult:
    return TaskResult.model_validate({
        "task_id": tid, "action": f"do {tid}", "status": status,
        "status_reason": "approved + evidence verified",
        "provenance": Provenance(job_author=author), "model": spend or ModelSpend()})


def result(**extra: object) -> RunReport:
    base: dict[str, object] = {
        "run_id": "assay-run-goal-x-0123456789", "plan_name": "goal-x", "plan_sha256": "ab" * 32,
        "status": "completed", "timestamp": "20261122_120000", "started_at": WHEN,
        "finished_at": WHEN, "tasks": [task("1")],
        "completion_by_priority": {"MEDIUM": {"total": 1, "completed": 1, "rate": 1.0}}}
    return RunReport.model_validate({**base, **extra})


def test_a_plan_run_keeps_its_report_and_has_no_goal_answer_or_model_sections() -> None:
    text = render_markdown(result())
    assert text.startswith("# Execution summary — goal-x\n")
    assert "- Status: **completed** (1/1 tasks completed)" in text
    assert "## Completion by priority" in text and "| MEDIUM | 1 | 1 | 100% |" in text
    assert "### Task 1 [MEDIUM] — completed" in text
    assert "- Job by: plan" in text
    for absent in ("## Goal", "## Answer", "## Model use"):
        assert absent not in text
    assert "- Reason:" not in text[:text.index("## Tasks")]  # no run-level reason


def test_goal_and_answer_are_quoted_so_their_markup_stays_inside() -> None:
    answer = RunAnswer(answer="Yes: versicolor sepals are longer.\n# not a heading",
                       analysis="Welch t = 10.5, p < 0.001.",
                       caveats=["Only 50 flowers\nper species.", "One site."])
    text = render_markdown(result(goal="Do sepals differ?\n## Injected", answer=answer,
                                  status_reason="all 1 tasks completed"))
    assert "- Reason: all 1 tasks completed" in text
    assert "## Goal\n\n> Do sepals differ?\n> ## Injected\n" in text
    assert "## Answer\n\n> Yes: versicolor sepals are longer.\n> # not a heading\n" in text
    assert "### Analysis\n\n> Welch t = 10.5, p < 0.001.\n" in text
    assert "### Caveats\n\n- Only 50 flowers per species.\n- One site.\n" in text
    assert text.index("## Goal") < text.index("## Answer") < text.index("## Tasks")


def test_deferred_run_shows_its_reason() -> None:
    text = render_markdown(result(status="deferred", tasks=[], goal="Why?",
                                  status_reason="no model is configured\nand no plan given"))
    assert "- Status: **deferred** (0/0 tasks completed)" in text
    assert "- Reason: no model is configured and no plan given" in text


def test_model_use_has_totals_and_rows_per_task_and_role() -> None:
    coder = ModelSpend().add(Spend(role="coder", calls=2, usage=usage(1000, 400, 200, 0, 0.02)))
    debug = coder.add(Spend(role="debugger", calls=1, usage=usage(500, 100, 0, 300, 0.01)))
    planner = ModelSpend().add(Spend(role="planner", calls=1,
                                     usage=usage(2000, 800, 1500, 0, 0.05)))
    run = planner.merge(coder).merge(debug)
    tasks = [task("1", author="coder:fast", spend=coder),
             task("2", status="failed", author="debugger:direct", spend=debug),
             task("3")]
    text = render_markdown(result(tasks=tasks, model=run))
    section = text[text.index("## Model use"):text.index("## Tasks")]
    assert f"Total: {describe_spend(run)}." in section
    assert "6 model calls" in section and "$0.1000" in section
    assert "| task | calls | input | output | cache write | cache read | cost (USD) |" in section
    assert "| `1` | 2 | 1,000 | 400 | 200 | 0 | 0.0200 |" in section
    assert "| `2` | 3 | 1,500 | 500 | 200 | 300 | 0.0300 |" in section
    assert "`3`" not in section  # no calls, no row
    assert "| coder | 4 | 2,000 | 800 | 400 | 0 | 0.0400 |" in section
    assert "| debugger | 1 | 500 | 100 | 0 | 300 | 0.0100 |" in section
    assert "| planner | 1 | 2,000 | 800 | 1,500 | 0 | 0.0500 |" in section
    assert "- Job by: coder:fast" in text and "- Job by: debugger:direct" in text


def test_spend_line_names_models_with_no_price() -> None:
    spend = ModelSpend(calls=1, usage=Usage(input_tokens=10, output_tokens=5,
                                            unpriced_models=["claude-future"]))
    assert describe_spend(spend) == ("1 model call, 10 input / 5 output / 0 cache-write / "
                                     "0 cache-read tokens, $0.0000 (no price known for "
                                     "claude-future)")


def test_why_no_skill_applied_is_in_the_summary_next_to_the_skills_that_did() -> None:
    skills = SkillSummary(
        applied={"2": "linear-regression@v1"},
        reasons={"goal": ("best match profile-table@v1 does not fit: none of the words "
                          "['profile'] occurs\nin the text"),
                 "1": "no skill above similarity 0.35 among 6 indexed"})
    text = render_markdown(result(skills=skills))
    section = text[text.index("## Skills"):text.index("## Tasks")]
    assert "- `2`: ran skill `linear-regression@v1`" in section
    assert ("- `goal`: no skill applied — best match profile-table@v1 does not fit: none of "
            "the words ['profile'] occurs in the text") in section
    assert "- `1`: no skill applied — no skill above similarity 0.35 among 6 indexed" in section
    assert "## Skills" not in render_markdown(result())


def test_the_skill_reasons_listed_are_bounded() -> None:
    many = {f"t{i:03d}": "x" * 5000 for i in range(SKILL_REASONS_SHOWN + 7)}
    text = render_markdown(result(skills=SkillSummary(reasons=many)))
    shown = [line for line in text.splitlines() if "no skill applied" in line]
    assert len(shown) == SKILL_REASONS_SHOWN
    assert max(len(line) for line in shown) < 600
    assert "- … and 7 more without a skill, listed in the results JSON" in text
