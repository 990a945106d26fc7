"""The planner's message for a study's cycle: the facts it carries, its byte budget, and that
a request without a study renders to the very bytes it did before studies existed."""

from __future__ import annotations

import json
from typing import Any

from activities.agents import render
from activities.agents.roles import Agents
from activities.agents.studies import STUDY_CONTEXT_BYTES, study_section
from tests.activities.agents.test_agents import DRAFT, plan_request, prompt_of
from tests.support.e2e import ROOT
from tests.support.fake_anthropic import FakeAnthropic, ToolUse
from tests.workflows.study.factories import hypothesis, outcome, summary, tree, verdict
from workflows.contracts.resources import Calibration
from workflows.contracts.roles import (
    DataFile,
    PlanDraftOutput,
    PlannedCheck,
    PlannedTask,
    PlanRequest,
    PlanReviewRequest,
)
from workflows.contracts.study import (
    CarriedTask,
    CycleDecision,
    DeferredPatch,
    StudyContext,
    TaskOutcome,
)

BEFORE = ROOT / "tests" / "data" / "agents" / "planner_messages.json"
"""What ``plan_message`` and ``plan_review_message`` rendered for these requests before
studies: made with the functions as they were, never edited by hand."""
RUN_ID = "goal-abcdef123456"


def requests() -> dict[str, PlanRequest]:
    data = [DataFile(name="m.csv", path="/abs/m.csv", sha256="a" * 64, size=12,
                     head="group,value\na,1\n")]
    draft = PlanDraftOutput(context="ctx", tasks=[PlannedTask(
        task_id="t1", action="describe", acceptance_criteria=["rows"], inputs=["m.csv"],
        checks=[PlannedCheck(metric="rows", op=">=", value=1)])])
    goal = "Do a and b differ?"
    return {
        "plain": PlanRequest(run_id=RUN_ID, goal=goal, data=data),
        "memory": PlanRequest(run_id=RUN_ID, goal=goal, data=data,
                              memory=["note one", "x" * 1500]),
        "revise": PlanRequest(run_id=RUN_ID, goal=goal, data=data, previous=draft,
                              feedback=[f"{RUN_ID} is bad", "more"])}


def context(**fields: Any) -> StudyContext:
    h1 = hypothesis("H1", statement="a and b differ in mean value")
    h2 = hypothesis("H2", "H1", metric="p_value", op="<", threshold=0.05, status="refuted",
                    decided_in=1, statement="the difference is significant with Welch's test",
                    evidence=[{"task_id": "welch", "metric": "p_value", "value": 0.31,
                               "cycle": 1}])
    h3 = hypothesis("H3", "H1", metric="p_value", op="<", threshold=0.05,
                    statement="the difference is significant on log values")
    welch = TaskOutcome(task_id="welch", status="completed", hypothesis="H2",
                        metrics={"p_value": 0.31, "t": 1.02}, checks_passed=1,
                        checks_declared=2, wall_s=12.4, estimated_s=60, cost_usd=0.0123,
                        estimated_cost_usd=0.05)
    boot = TaskOutcome(task_id="bootstrap", status="failed", reason="exit code 1",
                       diagnosis="out of memory: resample in chunks", wall_s=300,
                       cost_usd=0.02)
    cycle = summary(1, welch, boot, verdicts=[verdict("H2", "refuted")], key_value=0.31,
                    cost=0.0323).model_copy(update={
                        "blockers": ["the cluster queue was full for 2 hours"],
                        "deferred": [DeferredPatch(task_id="bootstrap", root_cause="memory",
                                                   likely_fix="args.chunk = 1000",
                                                   confidence=0.4)]})
    base: dict[str, Any] = {
        "study_id": "study-x", "cycle": 2, "tree": tree(h1, h2, h3), "previous": [cycle],
        "carried": [CarriedTask(task_id="bootstrap", cycle=1, status="failed",
                                reason="exit code 1",
                                diagnosis="out of memory: resample in chunks")],
        "decision": CycleDecision(action="pivot", pursue="H3", hypotheses=["H2"],
                                  reason="H2 was refuted: p_value 0.31 >= 0.05")}
    return StudyContext(**{**base, **fields})


def test_a_request_without_a_study_renders_exactly_as_before() -> None:
    before = json.loads(BEFORE.read_text())
    reqs = requests()
    for name, req in reqs.items():
        assert render.plan_message(req) == before[name], name
    revise = reqs["revise"]
    assert revise.previous is not None
    review = PlanReviewRequest(run_id=RUN_ID, goal=revise.goal, data=revise.data,
                               draft=revise.previous)
    assert render.plan_review_message(review) == before["review"]


def test_the_study_section_carries_what_happened_and_the_decision() -> None:
    req = requests()["memory"].model_copy(update={"study": context()})
    text = render.plan_message(req)
    assert text.startswith(render.plan_message(requests()["memory"]).rstrip("\n"))
    study = text[text.index("## Study"):]
    assert "This is cycle 2 of at most 10." in study
    assert ("Decision for this cycle: pivot: pursue H3, because H2 was refuted: p_value 0.31 "
            ">= 0.05 (about H2); decided by rules.") in study
    assert ("- H2 (parent H1) [refuted in cycle 1]: the difference is significant with "
            "Welch's test; test: p_value < 0.05; evidence: welch.p_value = 0.31 (cycle 1)"
            ) in study
    assert "- H3 (parent H1) [open]: the difference is significant on log values" in study
    assert ("### Cycle 1: completed, 2 tasks (1 unfinished), cost $0.0323, wall under 1 min, key "
            "value 0.31") in study
    assert ("- welch [completed] (hypothesis H2): verified metrics: p_value = 0.31, t = 1.02; "
            "checks 1/2 passed; time under 1 min (estimated 1 min); cost $0.0123 "
            "(estimated $0.0500)") in study
    assert ("- bootstrap [failed]: no verified metrics; time 5 min (no estimate); cost "
            "$0.0200 (no estimate); reason: exit code 1; diagnosis: out of memory: resample "
            "in chunks") in study
    assert "Blockers:\n- the cluster queue was full for 2 hours" in study
    assert "- task bootstrap: memory; likely fix: args.chunk = 1000 (confidence 0.40)" in study
    assert "Verdicts:\n- H2 refuted: auc = 0.7 (task 1)\n" in study  # the verdict said once
    assert "H2: refuted" not in study
    assert ("- task bootstrap from cycle 1 [failed]: reason: exit code 1; diagnosis: out of "
            "memory: resample in chunks") in study
    assert "`hypotheses`" in study and "Left out" not in study
    assert "study-x" not in text and "run-1" not in text  # no ids reach a prompt
    assert render.plan_message(req) == text  # the same request, the same bytes


def test_a_first_cycle_says_no_decision_asked_for_it() -> None:
    text = study_section(context(cycle=1, previous=[], carried=[], decision=None,
                                 tree=tree()))
    assert "No decision asked for it: it is the study's first cycle." in text
    assert "### Hypothesis tree\n\n(none yet)" in text


def large_context() -> StudyContext:
    """Everything at its bound: 100 long hypotheses, two 60-task cycles, 50 carried tasks."""
    long = "a statement that goes on " * 39
    decided: dict[str, Any] = {"status": "supported", "decided_in": 1}
    hypotheses = [hypothesis(f"H{i}", None if i == 0 else "H0", statement=f"{i} {long}",
                             **(decided if i % 2 else {}))
                  for i in range(100)]
    metrics = {f"metric_{m:02d}_{'x' * 50}": 0.123456789 * m for m in range(8)}

    def cycle(n: int) -> Any:
        tasks = [outcome(f"c{n}-t{i}", "completed" if i % 3 else "failed",
                         hypothesis=f"H{i}" if i % 5 == 0 else None, **metrics)
                 .model_copy(update={"reason": "r" * 300, "diagnosis": "d" * 300})
                 for i in range(60)]
        return summary(n, *tasks).model_copy(update={
            "blockers": [f"blocker {n}.{i} " + "b" * 280 for i in range(20)]})

    carried = [CarriedTask(task_id=f"k{i}", cycle=1 + i % 2, status="failed",
                           reason="x" * 300, diagnosis="y" * 300) for i in range(50)]
    return context(cycle=3, tree=tree(*hypotheses), previous=[cycle(1), cycle(2)],
                   carried=carried, decision=CycleDecision(action="fix", reason="z" * 4000))


def test_a_large_context_keeps_within_its_budget_and_says_what_was_cut() -> None:
    ctx = large_context()
    text = study_section(ctx)
    size = len(text.encode())
    assert STUDY_CONTEXT_BYTES - 2000 < size <= STUDY_CONTEXT_BYTES
    cut = text[text.index(f"### Left out to fit {STUDY_CONTEXT_BYTES:,} bytes"):]
    # the older cycle goes first, whole; then decided hypotheses and carried tasks; the
    # latest cycle's failures and the decision stay
    assert "60 task outcomes of cycle 1" in cut and "20 blockers of cycle 1" in cut
    assert "50 carried tasks" in cut and "- c1-t" not in text
    assert not any(f"- H{i} (parent H0) [supported" in text for i in range(1, 100, 2))
    assert "- H0 (root) [open]" in text
    assert "Decision for this cycle: fix, because zzz" in text
    assert "- c2-t0 [failed] (hypothesis H0)" in text
    assert "Blockers:\n- blocker 2.0 " in text
    assert study_section(ctx) == text
    whole = study_section(ctx, budget=10_000_000)
    assert "Left out" not in whole and len(whole.encode()) > 4 * STUDY_CONTEXT_BYTES


def test_a_tiny_budget_still_holds() -> None:
    text = study_section(large_context(), budget=1500)
    assert len(text.encode()) <= 1500 and text.endswith("[... cut at 1,500 bytes ...]")


H4 = {"id": "H4", "parent": "H1", "statement": "ranks differ",
      "test": {"metric": "p_value", "op": "<", "threshold": 0.05}}


async def test_a_studys_planner_is_offered_hypotheses_and_its_links_are_checked(
        fake: FakeAnthropic, agents: Agents) -> None:
    linked = [{**t, "hypothesis": "H4"} for t in DRAFT["tasks"]]
    changed_h1 = {**H4, "id": "H1", "parent": None}
    fake.script(ToolUse({**DRAFT, "tasks": linked, "hypotheses": [changed_h1]}),
                ToolUse({**DRAFT, "tasks": linked, "hypotheses": [H4]}))
    answer = await agents.plan_goal(plan_request(study=context()))
    first, repair = fake.requests
    assert first.body["tools"][0]["name"] == "StudyPlanDraftOutput"
    assert "hypotheses" in first.body["tools"][0]["input_schema"]["properties"]
    # the first answer re-proposes H1 differently and links H4, which it does not propose
    turn = json.dumps(repair.body["messages"][-1])
    assert "the study already has H1" in turn and "unknown hypothesis 'H4'" in turn
    assert type(answer.draft) is PlanDraftOutput
    assert [h.id for h in answer.draft.hypotheses] == ["H4"]
    assert {t.hypothesis for t in answer.draft.tasks} == {"H4"}
    assert "## Study" in prompt_of(fake)


async def test_a_run_of_its_own_is_offered_the_plan_schema_it_always_was(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse(DRAFT))
    answer = await agents.plan_goal(plan_request())
    tool = fake.requests[0].body["tools"][0]
    assert tool["name"] == "PlanDraftOutput"
    assert "hypothes" not in json.dumps(tool["input_schema"])
    assert answer.draft.hypotheses == [] and "## Study" not in prompt_of(fake)


def test_an_escalation_tells_the_planner_to_abandon_the_line_and_try_another() -> None:
    escalated = CycleDecision(action="pivot", escalated=True, abandon=["H3"],
                              hypotheses=["H3"], reason="fail fast: the fixes of H3 failed "
                              "in 2 cycles in a row (escalation after 2)")
    h3 = hypothesis("H3", "H1", metric="p_value", op="<", threshold=0.05, abandoned_in=2,
                    statement="the difference is significant on log values")
    ctx = context(decision=escalated)
    ctx = ctx.model_copy(update={"tree": ctx.tree.replaced([h3])})
    study = study_section(ctx)
    assert ("decided by rules. ESCALATION (fail fast): abandon H3; do not plan another fix of "
            "it. Try an alternative: a new sibling hypothesis or a different approach (another "
            "method, data or model).") in study
    assert "- H3 (parent H1) [open, abandoned in cycle 2: do not pursue]" in study


def test_the_planner_sees_each_kinds_calibration_and_each_calibrated_estimate() -> None:
    ctx = context(calibration={"fit-model": Calibration(
        kind="fit-model", factor=0.375, tasks=1, accuracy=0.375)})
    welch = ctx.previous[0].tasks[0].model_copy(update={"calibrated_s": 22.5})
    ctx.previous[0].tasks[0] = welch
    study = study_section(ctx)
    assert ("### Time estimates, calibrated from actuals (accuracy target ≥ 70%)\n\nMultiply "
            "your time estimates of each kind by its factor:\n\n- fit-model: actual = estimate "
            "times 0.38 (from 1 task); accuracy of the plan's estimates 38% (below target); a "
            "1 h estimate is 22 min") in study
    assert "time under 1 min (estimated 1 min, calibrated under 1 min)" in study
    assert "Time estimates, calibrated" not in study_section(context())


def test_a_statement_ending_its_sentence_reads_once_before_its_test() -> None:
    h1 = hypothesis("H1", statement="a and b differ in mean value.")
    said = study_section(context(tree=tree(h1)))
    assert "[open]: a and b differ in mean value; test: " in said
    assert ".; test" not in said


def test_the_planner_is_told_a_tree_hypothesis_is_linked_not_proposed_again() -> None:
    said = study_section(context())
    assert ("A hypothesis already in the tree is not proposed again: a task links to it by "
            "its id alone (its `hypothesis`), and a new one may name it as `parent`") in said


def test_a_recorded_study_shows_no_measured_durations_so_its_replay_asks_the_same() -> None:
    from workflows.contracts.policy import ModelRecording

    ctx = context(calibration={"fit-model": Calibration(
        kind="fit-model", factor=0.375, tasks=1, accuracy=0.375)})
    timed = study_section(ctx)
    assert "wall under 1 min" in timed and "time 5 min (no estimate)" in timed
    slower = ctx.model_copy(update={"previous": [ctx.previous[0].model_copy(update={
        "wall_s": 1800.0, "tasks": [t.model_copy(update={"wall_s": 900.0})
                                    for t in ctx.previous[0].tasks]})]})
    untimed = study_section(ctx, timed=False)
    assert study_section(slower, timed=False) == untimed  # the same, however long it took
    assert "wall under" not in untimed and "time 5 min" not in untimed
    assert "Time estimates, calibrated" not in untimed
    assert ("Measured durations (tasks' times, cycles' wall times, time calibration) are left "
            "out: this run's model exchanges are recorded or replayed") in untimed
    recorded = plan_request().model_copy(update={
        "study": ctx, "recording": ModelRecording(mode="record", name="study.jsonl")})
    assert "Measured durations" in render.plan_message(recorded)
    assert "Measured durations" not in render.plan_message(recorded.model_copy(
        update={"recording": None}))


def test_a_cycle_of_one_task_is_counted_in_the_singular() -> None:
    one = summary(1, TaskOutcome(task_id="welch", status="completed", hypothesis="H2"),
                  verdicts=[verdict("H2", "refuted")])
    req = requests()["memory"].model_copy(update={"study": context(previous=[one])})
    study = render.plan_message(req)
    assert "### Cycle 1: completed, 1 task (0 unfinished)" in study
