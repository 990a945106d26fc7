"""``prepare_environment``: base when the worker's interpreter suffices, else provisioned."""

from __future__ import annotations

import sys

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.environments import Environments
from activities.environments.activity import EnvironmentPreparer
from activities.review.probe import Prober
from workflows.contracts.environments import PrepareEnvironmentInput
from workflows.contracts.errors import ErrorType


def preparer(environments: Environments) -> EnvironmentPreparer:
    prober = Prober(sys.executable)

    async def base_versions(names: list[str]) -> dict[str, str | None]:
        return (await prober.probe([], names)).distributions

    return EnvironmentPreparer(environments, base_versions, heartbeat_every_s=0.05)


async def test_requirements_the_worker_meets_run_in_base_with_nothing_installed(
        environments: Environments) -> None:
    prepared = await ActivityEnvironment().run(
        preparer(environments).prepare_environment,
        PrepareEnvironmentInput(requirements=["numpy>=1.26", "pydantic"]))
    assert prepared.name == "base" and not prepared.provisioned
    assert environments.installs == 0


async def test_missing_requirements_are_provisioned_and_heartbeat(
        environments: Environments) -> None:
    beats: list[object] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.extend(details)
    prepared = await env.run(preparer(environments).prepare_environment,
                             PrepareEnvironmentInput(requirements=["alpha"]))
    assert prepared.name == "custom" and prepared.provisioned and not prepared.reused
    assert prepared.pins == ["alpha==1.0", "beta==2.0"]
    assert beats and all(b == {"phase": "provisioning", "environment": "custom"} for b in beats)


@pytest.mark.parametrize(("request_", "words"), [
    (PrepareEnvironmentInput(requirements=["nosuchpkg"]), "package 'nosuchpkg' was not found"),
    (PrepareEnvironmentInput(environment="nope"), "no environment named 'nope'"),
])
async def test_a_bad_request_is_a_non_retryable_refusal(
        environments: Environments, request_: PrepareEnvironmentInput, words: str) -> None:
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(preparer(environments).prepare_environment, request_)
    assert caught.value.type == ErrorType.ENVIRONMENT_REFUSED and caught.value.non_retryable
    assert words in caught.value.message
