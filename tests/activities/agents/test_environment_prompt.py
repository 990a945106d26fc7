"""The coder and debuggers are told which environment a job runs in, and how to ask for more."""

from __future__ import annotations

from activities.agents.prompting import environment_text, job_text
from workflows.contracts.environments import PreparedEnvironment
from workflows.contracts.plan import JobSpec
from workflows.contracts.roles import EnvironmentFacts
from workflows.task.execution import environment_facts

SCIENCE = PreparedEnvironment(name="science", digest="ab" * 32, python="3.11.7",
                              pins=["numpy==2.4.6", "pandas==3.1.1"])


def test_a_provisioned_environment_is_named_with_its_packages_and_how_to_add_more() -> None:
    facts = environment_facts(SCIENCE)
    assert facts.packages == {"numpy": "2.4.6", "pandas": "3.1.1"}
    text = environment_text(facts)
    assert text.startswith(f"The job runs in the environment {SCIENCE.label()}.")
    assert "Installed: numpy==2.4.6, pandas==3.1.1" in text
    assert "adding them to `requirements`" in text


def test_the_worker_s_interpreter_reads_as_before() -> None:
    text = environment_text(EnvironmentFacts(python="3.11.7", packages={"numpy": "2.4.6"}))
    assert text == "Python 3.11.7\n\nInstalled: numpy==2.4.6"


def test_a_job_s_environment_is_listed_with_its_settings_only_when_it_names_one() -> None:
    named = JobSpec(code="print(1)", environment="science")
    plain = JobSpec(code="print(1)")
    assert "- environment: science" in job_text(named)
    assert "environment" not in job_text(plain)


def test_the_coder_is_told_listed_packages_only_when_some_are_known() -> None:
    from activities.agents.prompting import system_prompt
    from activities.agents.render import code_message
    from tests.activities.agents.test_agents import code_request

    named = ["science"]
    unknown = code_message(code_request(environment=None), environments=named)
    assert "listed above" not in unknown
    assert "The packages of the job's environment are not known here" in unknown
    assert "(its packages are not known here)" in unknown
    known = code_message(code_request(environment=EnvironmentFacts(
        python="3.11.7", packages={"numpy": "2.4.6"})), environments=named)
    assert "Installed: numpy==2.4.6" in known and "(its packages are listed above)" in known
    assert "not known here" not in known
    system = system_prompt("coder")
    assert "when\n  it says none are known, rely on no package being there" in system


def test_a_model_reviewer_is_shown_the_job_environment_s_packages_as_the_coder_is() -> None:
    from activities.agents.render import review_message
    from tests.activities.agents.test_agents import review_request

    facts = environment_facts(SCIENCE)
    text = review_message(review_request("infrastructure", environment=facts))
    shown = text[text.index("## Sandbox environment"):text.index("## The job\n")]
    assert "check that what the job calls exists and behaves so in these versions" in shown
    assert environment_text(facts) in shown  # the coder's own rendering
    assert "## Sandbox environment" not in review_message(review_request("infrastructure"))
