"""The output processor of a study's cycle is told the cycle, the limit, the study's rules and
the hypotheses the cycle tests; a run of its own is asked exactly what it always was."""

from __future__ import annotations

from activities.agents.prompting import system_prompt
from activities.agents.roles import Agents
from activities.agents.study_facts import TESTED_SHOWN, answer_section
from tests.activities.agents.test_agents import prompt_of, summary_request
from tests.support.fake_anthropic import FakeAnthropic, ToolUse
from tests.workflows.study.factories import hypothesis, tree
from workflows.contracts.study import StudyContext, StudyPolicy

PLAIN_MESSAGE = (
    '## Goal\n\nDo iris species differ?\n\n## Task compare\n\n- action: Welch test\n- status: '
    'completed\n- status reason: (none)\n- metrics: {"p_value": 0.004}\n- artifacts: '
    '["comparison.json"]\n\nChecks:\n- p_value < 0.05: pass\n\nstdout (tail):\n```\ndone\n```\n')
PLAIN_REQUEST = (
    '{"run_id":"assay-run-iris-morphology-1c0e5f0a2b","task_id":null,"budget":null,'
    '"recording":null,"guidelines":[],"goal":"Do iris species differ?","tasks":[{"task_id":'
    '"compare","action":"Welch test","status":"completed","status_reason":"","metrics":'
    '{"p_value":0.004},"checks":["p_value < 0.05: pass"],"artifacts":["comparison.json"],'
    '"stdout_tail":"done\\n","files":[],"omitted":[]}],"data":[],"answer_format":null}')
"""The plain request and its message as the code before study facts made them."""


def facts(cycle: int = 3) -> StudyContext:
    """Cycle ``cycle`` of a three-cycle study stopping on ``auc >= 0.8``, steered by ``auc``."""
    return StudyContext(
        study_id="study-1", cycle=cycle,
        policy=StudyPolicy.model_validate({
            "max_cycles": 3, "acceptance": [{"metric": "auc", "op": ">=", "threshold": 0.8}],
            "key_metric": {"name": "auc", "direction": "maximize"}}),
        tree=tree(hypothesis("H1", statement="a model predicts it out of sample"),
                  hypothesis("H2", "H1", status="refuted", decided_in=1),
                  hypothesis("H3", "H1", metric="auc_gain", op=">", threshold=0,
                             statement="boosted trees beat the logistic model")))


async def test_a_plain_run_s_output_processor_is_asked_exactly_what_it_was(
        fake: FakeAnthropic, agents: Agents) -> None:
    req = summary_request()
    assert req.model_dump_json() == PLAIN_REQUEST
    fake.script(ToolUse({"answer": "Yes.", "caveats": []}))
    await agents.summarize_run(req)
    assert prompt_of(fake) == PLAIN_MESSAGE
    assert fake.requests[0].body["system"][0]["text"] == system_prompt("output_processor")


async def test_a_study_cycle_s_output_processor_is_told_the_cycle_the_rules_and_the_tests(
        fake: FakeAnthropic, agents: Agents) -> None:
    fake.script(ToolUse({"answer": "Not yet.", "caveats": []}))
    await agents.summarize_run(summary_request(study=facts(), testing=["H1", "H3"]))
    said = prompt_of(fake)
    print(said)
    assert said.index("## Goal") < said.index("## Study") < said.index("## Task compare")
    for part in (
            "This run is a cycle of a study. This is cycle 3 of at most 3. It is the study's "
            "last cycle: no later cycle will settle what this one leaves open",
            "The study stops when all its acceptance criteria hold: `auc >= 0.8`",
            "Key metric: `auc` (higher is better)",
            "### Hypotheses this cycle tests\n\n- H1 (root) [open]: a model predicts it out "
            "of sample; test: auc >= 0.8\n- H3 (parent H1) [open]: boosted trees beat the "
            "logistic model; test: auc_gain > 0\n\n",
            "give the verified value of the metric its test names"):
        assert part in said, part
    assert "H2" not in said  # decided earlier, not tested by this cycle
    assert fake.requests[0].body["system"][0]["text"] == system_prompt("output_processor")


def test_an_earlier_cycle_is_told_how_many_may_follow_and_no_test_says_so() -> None:
    said = answer_section(facts(cycle=1), [])
    assert "This is cycle 1 of at most 3. After it, at most 2 more cycles may run." in said
    assert "(none: no task of this cycle is linked to a hypothesis)" in said


def test_the_hypotheses_shown_are_cut_by_the_one_helper_saying_which_it_left_out() -> None:
    many = [hypothesis(f"H{n:02d}") for n in range(TESTED_SHOWN + 2)]
    ctx = facts().model_copy(update={"tree": tree(*many)})
    said = answer_section(ctx, [h.id for h in many])
    assert said.count("[open]") == TESTED_SHOWN
    assert f"… 2 more hypotheses not shown: H{TESTED_SHOWN:02d}, H{TESTED_SHOWN + 1:02d}" in said
