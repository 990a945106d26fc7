"""The Markdown report: goal, answer and model use next to the tasks and their provenance."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from activities.reports.markdown import SKILL_REASONS_SHOWN, describe_spend, render_markdown
from workflows.contracts.environments import PreparedEnvironment
from workflows.contracts.execution import ExecutionOutcome
from workflows.contracts.results import (
    PlanSource,
    Provenance,
    ReflectionSummary,
    RunReport,
    TaskResult,
)
from workflows.contracts.roles import RunAnswer
from workflows.contracts.skills import SkillReport, SkillSummary
from workflows.contracts.spend import ModelSpend, Spend, Usage

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


def ran(tid: str, isolation: str, status: str = "completed", stderr: str = "",
        metrics: dict[str, object] | None = None) -> TaskResult:
    return TaskResult.model_validate({
        "task_id": tid, "status": status, "status_reason": "r", "metrics": metrics or {},
        "started_at": WHEN, "finished_at": WHEN + timedelta(seconds=75),
        "execution": ExecutionOutcome(outcome="succeeded" if status == "completed"
                                      else "nonzero_exit", isolation=isolation,
                                      stderr_tail=stderr, duration_s=1.23456)})


def isolated(uid: int, memory: int = 256) -> str:
    return (f"bwrap: no network, read-only filesystem; per-job cgroup (v2: memory); as uid "
            f"{uid}; limits: memory {memory} MiB, timeout 60 s; in cgroup assay-job-{uid}")


BWRAP = isolated(1001)


def test_the_isolation_line_appears_once_with_the_tasks_that_differ() -> None:
    tasks = [ran("a", isolated(1001)), ran("b", isolated(1002)),
             ran("c", isolated(1003, memory=512))]
    text = render_markdown(result(tasks=tasks))

    assert text.count("no network") == 1
    assert ("- Isolation (every task that ran): bwrap: no network, read-only filesystem; "
            "per-job cgroup (v2: memory)\n") in text
    assert "- What differs by task (such as limits) is in the sections of `a`, `b`, `c`" in text
    c = text[text.index("### Task c"):]
    assert "- Isolation of this task: limits: memory 512 MiB, timeout 60 s\n" in c
    assert "uid 100" not in text and "assay-job-" not in text  # each job's own identity
    same = render_markdown(result(tasks=[ran("a", isolated(1)), ran("b", isolated(2))]))
    assert same.count("limits: memory 256 MiB") == 1 and "What differs by task" not in same
    assert "- Isolation of this task" not in same


def test_a_failed_task_shows_the_tail_of_its_traceback_fenced() -> None:
    frames = "".join(f'  File "job.py", line {i}, in step{i}\n' for i in range(60))
    stderr = f"Traceback (most recent call last):\n{frames}KeyError: 'grp'\n"
    tasks = [ran("ok", BWRAP, stderr="a warning"), ran("bad", BWRAP, "failed", stderr)]
    text = render_markdown(result(tasks=tasks))

    bad = text[text.index("### Task bad"):]
    assert "Last lines the job wrote to stderr:\n\n```text\n" in bad
    assert "KeyError: 'grp'\n```" in bad
    assert "in step59" in bad and "in step40" not in bad  # the last 20 lines only
    assert "a warning" not in text  # a completed task's stderr is not shown


def test_the_fence_outgrows_backticks_in_the_traceback() -> None:
    text = render_markdown(result(tasks=[ran("bad", BWRAP, "failed", "```\n# Injected\n")]))
    assert "````text\n```\n# Injected\n````" in text


def test_run_and_task_durations_and_metrics_in_significant_digits() -> None:
    tasks = [ran("t", BWRAP, metrics={"p_value": 0.0001999600079984003, "rows": 24,
                                      "means": {"a": 5.0123456}})]
    text = render_markdown(result(tasks=tasks, finished_at=WHEN + timedelta(seconds=125)))

    assert "(took 2 min 05 s)" in text
    assert "| `t` | MEDIUM | completed | 1 min 15 s |" in text
    assert "took 1 min 15 s" in text and "- Run: succeeded in 1.23 s" in text
    assert "`p_value` = 0.0002" in text and "`rows` = 24" in text
    assert "`means` = {a: 5.012}" in text and "0.00019996" not in text


def test_a_tasks_metric_with_an_interval_is_printed_beside_its_value() -> None:
    r2 = {"value": 0.49, "ci": [0.421, 0.55], "level": 0.95, "se": 0.033, "n": 442,
          "method": "bootstrap"}
    text = render_markdown(result(tasks=[ran("t", BWRAP, metrics={"r2": r2, "rows": 442})]))
    assert "`r2` = 0.49 [0.421, 0.55] 95 %" in text and "`rows` = 442" in text


def test_a_supplied_plan_shows_its_sha256_and_author_beside_the_goals() -> None:
    supplied = PlanSource(sha256="cd" * 32, by="ada", name="my-plan")
    text = render_markdown(result(goal="Why?", supplied_plan=supplied))

    assert (f"- Plan sha256 (canonical JSON): `{'cd' * 32}` (`my-plan`), supplied by `ada`"
            in text)
    assert f"- Goal sha256: `{'ab' * 32}`" in text


def test_a_planned_goal_labels_its_digest_as_the_goals() -> None:
    planned = render_markdown(result(goal="Why?"))
    assert f"- Goal sha256: `{'ab' * 32}`" in planned and "Plan sha256" not in planned
    assert f"- Plan sha256 (canonical JSON): `{'ab' * 32}`" in render_markdown(result())
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


def test_a_task_names_the_environment_it_ran_in_with_its_resolved_packages() -> None:
    pins = [f"pkg{i:02d}==1.{i}" for i in range(14)]
    env = PreparedEnvironment(name="science", digest="c" * 64, python="3.11.7", pins=pins,
                              install_s=6.25)
    in_env = ran("fit", BWRAP).model_copy(
        update={"provenance": Provenance(environment=env)})
    text = render_markdown(result(tasks=[in_env, ran("base", BWRAP)]))

    fit = text[text.index("### Task fit"):text.index("### Task base")]
    assert (f"- Environment: `science@{'c' * 12}` (Python 3.11.7; installed in 6.25 s; "
            "14 packages: `pkg00==1.0`") in fit
    assert "`pkg11==1.11`, and 2 more)" in fit and "pkg12" not in fit
    assert "- Environment:" not in text[text.index("### Task base"):]  # the worker's own
    reused = in_env.model_copy(update={"provenance": Provenance(
        environment=env.model_copy(update={"reused": True}))})
    assert "(Python 3.11.7; reused; 14 packages" in render_markdown(result(tasks=[reused]))


def test_an_environment_with_added_packages_names_them_first() -> None:
    pins = [f"pkg{i:02d}==1.{i}" for i in range(14)] + ["seaborn==0.13.2"]
    env = PreparedEnvironment(name="science", digest="c" * 64, python="3.11.7", pins=pins,
                              added=["seaborn>=0.13"], reused=True)
    text = render_markdown(result(tasks=[ran("fit", BWRAP).model_copy(
        update={"provenance": Provenance(environment=env)})]))
    assert (f"- Environment: `science + seaborn>=0.13@{'c' * 12}` (Python 3.11.7; reused; "
            "15 packages: `seaborn==0.13.2`, `pkg00==1.0`") in text
    assert "`pkg10==1.10`, and 3 more)" in text
    assert env.label() == f"science@{'c' * 12}"  # what events and outcomes record is unchanged


def test_the_overview_counts_how_often_each_job_ran_not_every_phase_attempt() -> None:
    retried = ran("fit", BWRAP).model_copy(update={"provenance": Provenance.model_validate(
        {"approval": {"attempts": 1}, "execution": {"attempts": 2},
         "verification": {"attempts": 2}, "job_author": "debugger:direct"})})
    text = render_markdown(result(tasks=[retried]))

    assert "| task | priority | status | time | job runs | job by |" in text
    assert "| `fit` | MEDIUM | completed | 1 min 15 s | 2 | debugger:direct |" in text


def test_a_run_with_no_tasks_says_why_it_has_no_timeline() -> None:
    text = render_markdown(result(tasks=[], status="rejected"))
    assert "No task was made (the run ended before its plan ran), so there is no timeline" in text


def test_the_packages_an_environment_asks_for_come_before_their_dependencies() -> None:
    pins = [f"dep{i:02d}==1.{i}" for i in range(20)] + ["pandas==3.1.1", "scipy==1.17.1"]
    env = PreparedEnvironment(name="science", digest="c" * 64, python="3.11.7", pins=pins,
                              requirements=["scipy", "pandas"], reused=True)
    text = render_markdown(result(tasks=[ran("fit", BWRAP).model_copy(
        update={"provenance": Provenance(environment=env)})]))
    assert "22 packages: `pandas==3.1.1`, `scipy==1.17.1`, `dep00==1.0`," in text


def test_a_run_whose_tasks_went_to_the_learner_says_where_their_learning_is() -> None:
    handed = task("1").model_copy(update={"skill_report": SkillReport(reported=True)})
    reflection = ReflectionSummary(patches_applied=1)
    text = render_markdown(result(tasks=[handed], reflection=reflection))
    assert "Memory learns from these tasks after they end" in text
    assert "`assay memory rules`" in text
    older = reflection.model_copy(update={"rules_promoted": ["sem-1"]})  # learned in the task
    assert "after they end" not in render_markdown(result(tasks=[handed], reflection=older))
    waited = render_markdown(result(tasks=[task("1")], reflection=reflection))
    assert "after they end" not in waited  # nothing was handed over


def test_a_computed_priority_shows_its_score_and_reasons() -> None:
    scored = {"score": 55, "level": "HIGH",
              "reasons": ["+30 on the critical path (longest chain by task count)",
                          "+25 deadline in 1 day(s) (≤ 2)"]}
    text = render_markdown(result(priority_scores={"1": scored}))
    assert ("- `1`: HIGH, score 55 (+30 on the critical path (longest chain by task count); "
            "+25 deadline in 1 day(s) (≤ 2))") in text
    assert "Priorities computed" not in render_markdown(result())
