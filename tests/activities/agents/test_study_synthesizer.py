"""The study synthesizer is told the study's whole record and cites only what it holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from temporalio.exceptions import ApplicationError

from activities.agents.roles import Agents
from activities.llm.gateway import ModelGateway
from tests.activities.agents.test_agents import KEY, LIGHT, MODEL, prompt_of
from tests.support.fake_anthropic import FakeAnthropic, ToolUse
from tests.workflows.study.factories import decision, plan, report, result
from workflows.contracts.cycles import SynthesisRequest
from workflows.contracts.estimates import Estimate
from workflows.contracts.study import (
    MAX_METRICS,
    CycleDecision,
    CycleSummary,
    StudyState,
    TaskOutcome,
)

R2 = Estimate(value=0.49, ci=(0.421, 0.55), level=0.95, n=442)


def ended_study() -> StudyState:
    """A two-cycle study that stopped at its cycle limit, its root concluded inconclusive."""
    return StudyState.model_validate({
        "study_id": "study-diabetes", "goal": "Does BMI predict disease progression?",
        "policy": {"max_cycles": 2, "acceptance": [{"metric": "cv_r2", "op": ">=",
                                                     "threshold": 0.5}],
                   "key_metric": {"name": "cv_r2", "direction": "maximize"}},
        "tree": {"hypotheses": [
            {"id": "H1", "statement": "BMI explains progression", "status": "inconclusive",
             "decided_in": 2, "test": {"metric": "cv_r2", "op": ">=", "threshold": 0.5},
             "evidence": [{"task_id": "pooled", "metric": "cv_r2", "value": 0.49,
                           "ci": [0.421, 0.55], "level": 0.95, "cycle": 2}]}]},
        "summaries": [
            CycleSummary(cycle=1, run_id="study-diabetes.cycle-1", status="completed",
                         plan_sha256="0" * 64,
                         tasks=[TaskOutcome(task_id="bmi", status="completed",
                                            metrics={"slope": 37.5, "cv_r2": 0.34})],
                         tasks_total=1, key_value=0.34, key_task="bmi",
                         decision=CycleDecision(action="iterate", reason="below 0.5")),
            CycleSummary(cycle=2, run_id="study-diabetes.cycle-2", status="completed",
                         plan_sha256="1" * 64,
                         tasks=[TaskOutcome(task_id="pooled", status="completed",
                                            hypothesis="H1", metrics={"cv_r2": R2},
                                            metrics_omitted="3 more metrics left out")],
                         tasks_total=1, key_value=0.49, key_ci=(0.421, 0.55),
                         key_task="pooled",
                         decision=CycleDecision(action="stop", reason="cycle limit reached"))],
        "cycles": 2})


def request() -> SynthesisRequest:
    return SynthesisRequest(run_id="study-diabetes", state=ended_study(), status="completed",
                            reason="cycle limit reached")


def answer(cycle: int = 2, task: str = "pooled", metric: str = "cv_r2.ci_high") -> ToolUse:
    cite: dict[str, Any] = {"cycle": cycle, "task_id": task, "metric": metric}
    return ToolUse({"conclusion": "BMI explains about half the variance: R² 0.49.",
                    "statements": [{"kind": "sure", "text": "0.5 lies inside 0.421\u20130.55.",
                                    "cites": [cite]}]})


async def test_its_request_holds_the_tree_the_cycles_intervals_and_the_criteria(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(answer())
    got = await agents.synthesize_study(request())
    prompt = prompt_of(fake)
    for said in ("Does BMI predict disease progression?",
                 "completed after 2 of at most 2 cycles: cycle limit reached",
                 "Acceptance criterion: `cv_r2 >= 0.5`", "Key metric: `cv_r2` (higher is better)",
                 "H1 (root) [inconclusive in cycle 2]: BMI explains progression",
                 "cycle 2, task pooled: cv_r2 = 0.49 [0.421, 0.55] 95 %",
                 "## Cycle 1", "cycle 1, task bmi [completed]: slope = 37.5; cv_r2 = 0.34",
                 "key metric cv_r2 = 0.49 [0.421, 0.55] (task pooled)",
                 "(3 more metrics left out)", "Decision after it: iterate, because below 0.5."):
        assert said in prompt, said
    assert fake.requests[0].body["system"][0]["text"].startswith("# Role: study synthesizer")
    synthesis = got.synthesis
    assert synthesis.conclusion.startswith("BMI explains about half")
    assert [c.shown() for c in synthesis.statements[0].cites] == [
        "cycle 2, task pooled: cv_r2.ci_high"]
    assert (got.spend.role, synthesis.model) == ("study_synthesizer", MODEL)


async def test_a_citation_outside_the_record_is_sent_back_for_repair(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(answer(cycle=3), answer(task="bmi", metric="r2"), answer())
    got = await agents.synthesize_study(request())
    assert got.spend.repairs == 2
    repairs = str(fake.requests[1].body["messages"]) + str(fake.requests[2].body["messages"])
    assert "cites cycle 3, which did not run" in repairs
    assert "cites task 'bmi', which is not a task of cycle 2 in the record" in repairs


async def test_an_answer_that_stays_uncited_fails_as_invalid_output(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(*(answer(metric="r2") for _ in range(3)))
    with pytest.raises(ApplicationError) as failed:
        await agents.synthesize_study(request())
    assert failed.value.type == "InvalidModelOutput"


async def test_it_writes_on_the_writing_tier(fake: FakeAnthropic) -> None:
    gateway = ModelGateway(SecretStr(KEY), fake.base_url, {"default": MODEL},
                           light_model=LIGHT)
    fake.script(answer())
    try:
        got = await Agents(gateway).synthesize_study(request())
    finally:
        await gateway.aclose()
    assert got.spend.model == MODEL and fake.requests[0].body["model"] == MODEL


def test_an_older_cycle_kept_as_its_headline_may_be_cited_by_its_evidence_and_key_task() -> None:
    from activities.agents.synthesis import cited_record

    state = ended_study()
    headline = state.summaries[0].model_copy(update={"tasks": []})
    known = cited_record(state.model_copy(update={"summaries": [headline,
                                                                state.summaries[1]]}))
    assert known[(1, "bmi")] == {"cv_r2": 0.34}  # its key-metric task
    assert known[(2, "pooled")]["cv_r2"] == R2  # the outcome, before H1's plain evidence


def test_an_older_cycle_says_once_and_on_one_line_what_its_headline_left_out() -> None:
    from activities.agents.synthesis import synthesis_message

    state = ended_study()
    older = state.summaries[0].model_copy(update={"tasks_total": 3}).headline()
    said = synthesis_message(request().model_copy(update={"state": state.model_copy(
        update={"summaries": [older, state.summaries[1]]})}))
    cycle = said[said.index("## Cycle 1"):said.index("## Cycle 2")]
    assert cycle == (
        "## Cycle 1\n\nRun completed, 3 tasks (0 unfinished); key metric cv_r2 = 0.34 (task "
        "bmi).\n\nDecision after it: iterate, because below 0.5.\n\nLeft out here (the cycle's "
        "own report has it): its 3 task outcomes (an older cycle keeps only its headline; its "
        "key-metric task and the tree's evidence still name its verified values).\n\n")
    assert "\n\n\n" not in said


def test_a_cycle_cut_to_its_first_outcomes_counts_the_rest_once() -> None:
    from activities.agents.synthesis import synthesis_message

    state = ended_study()
    cut = state.summaries[0].model_copy(update={"tasks_total": 3, "omitted": [
        "2 tasks (completed, not linked first)", "1 deferred patches"]})
    said = synthesis_message(request().model_copy(update={"state": state.model_copy(
        update={"summaries": [cut, state.summaries[1]]})}))
    assert ("- cycle 1, task bmi [completed]: slope = 37.5; cv_r2 = 0.34\n\nLeft out here (the "
            "cycle's own report has it): 2 more task outcomes (completed, linked to no "
            "hypothesis); 1 deferred patches.\n\n## Cycle 2") in said
    assert "not linked first" not in said and "more tasks are in" not in said


def test_a_statement_ending_its_sentence_reads_once_before_its_test() -> None:
    from activities.agents.synthesis import synthesis_message

    state = ended_study()
    ended = state.tree.hypotheses[0].model_copy(update={"statement": "BMI explains it."})
    said = synthesis_message(request().model_copy(update={"state": state.model_copy(update={
        "tree": state.tree.replaced([ended])})}))
    assert "[inconclusive in cycle 2]: BMI explains it; test: `cv_r2 >= 0.5`" in said


def test_a_cycle_of_one_task_says_so_in_the_singular() -> None:
    from activities.agents.synthesis import synthesis_message

    state = ended_study()  # each cycle ran one task
    one = state.summaries[0].model_copy(update={"tasks_total": 2, "omitted": [
        "1 task (completed, not linked first)"]})
    said = synthesis_message(request().model_copy(update={"state": state.model_copy(
        update={"summaries": [one, state.summaries[1]]})}))
    assert "Run completed, 1 task (0 unfinished); key metric cv_r2 = 0.49" in said
    assert "1 more task outcome (completed, linked to no hypothesis)" in said
    assert "1 tasks" not in said and "1 more task outcomes" not in said


ODDS = {f"or_{name}": 1.0 + n / 10 for n, name in enumerate(
    ("rate_marriage", "age", "yrs_married", "children", "religious", "educ", "occupation",
     "occupation_husb"))}


def reported_study(tmp_path: Path, metrics: dict[str, Any], **check: Any) -> StudyState:
    """:func:`ended_study` with cycle 1 kept as its headline, its report on disk."""
    checks = [{"check": check, "passed": True, "actual": 1}] if check else []
    cycle_1 = report([result("odds", metrics=metrics, checks=checks)],
                     plan([decision("odds")]), run_id="study-diabetes.cycle-1")
    path = tmp_path / "cycle-1.json"
    path.write_text(cycle_1.model_dump_json(), encoding="utf-8")
    state = ended_study()
    older = state.summaries[0].model_copy(update={"results_json": str(path)}).headline()
    return state.model_copy(update={"summaries": [older, state.summaries[1]]})


async def test_every_cycle_s_verified_metrics_reach_it_read_from_its_report(
        fake: FakeAnthropic, agents: Agents, tmp_path: Path) -> None:
    state = reported_study(tmp_path, {**ODDS, "rows": 6366})
    fake.script(answer(cycle=1, task="odds", metric="or_occupation_husb"))
    got = await agents.synthesize_study(request().model_copy(update={"state": state}))
    prompt = prompt_of(fake)
    cycle_1 = prompt[prompt.index("## Cycle 1"):prompt.index("## Cycle 2")]
    assert "- cycle 1, task odds [completed]: " in cycle_1
    for name, value in ODDS.items():  # all eight: the state kept none of them
        assert f"{name} = {value:g}" in cycle_1, name
    assert "rows = 6366" in cycle_1 and "Left out" not in cycle_1
    assert "cite each as this cycle, its task and the metric's name" in cycle_1
    assert [c.shown() for c in got.synthesis.statements[0].cites] == [
        "cycle 1, task odds: or_occupation_husb"]


def test_a_task_s_metrics_are_cut_by_the_one_helper_checks_first_saying_what_it_left_out(
        tmp_path: Path) -> None:
    from activities.agents.synthesis import TASK_METRICS, synthesis_message, with_reports

    many = {f"m{n:02d}": n for n in range(TASK_METRICS + 5)}
    state = with_reports(reported_study(tmp_path, many, metric="m44", op=">=", value=0), None)
    said = synthesis_message(request().model_copy(update={"state": state}))
    line = next(x for x in said.splitlines() if x.startswith("- cycle 1, task odds"))
    assert line.count(" = ") == TASK_METRICS > MAX_METRICS
    assert "m44 = 44" in line  # its check names it: kept before the others
    assert "(… 5 more metrics not shown: m39, m40, m41, m42, m43)" in line
