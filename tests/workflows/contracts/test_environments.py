"""Hostile environment names and requirements are refused when a plan is read."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from workflows.contracts.environments import PrepareEnvironmentInput
from workflows.contracts.plan import JobSpec


def job(**fields: Any) -> JobSpec:
    return JobSpec.model_validate({"code": "print(1)", **fields})


@pytest.mark.parametrize("name", ["../science", "a/b", "/etc", "Science", "x" * 10_000, "",
                                  "sci ence", "science\n"])
def test_an_environment_name_must_be_a_short_plain_name(name: str) -> None:
    with pytest.raises(ValidationError, match="environment"):
        job(environment=name)


@pytest.mark.parametrize(("requirement", "words"), [
    ("-e .", "installer options"),
    ("--index-url https://evil.example/simple", "installer options"),
    ("/tmp/x.whl", "installer options"),
    ("./pkg", "installer options"),
    ("pkg @ https://evil.example/pkg.whl", "direct URL"),
    ("pkg @ file:///tmp/pkg.whl", "direct URL"),
    ("numpy >>> 2", "cannot be parsed"),
    ("numpy; --no-index", "cannot be parsed"),
    ("a" * 300, "at most 200 characters"),
])
def test_requirements_other_than_names_with_specifiers_are_refused(requirement: str,
                                                                    words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        job(requirements=[requirement])
    with pytest.raises(ValidationError, match=words):
        PrepareEnvironmentInput(requirements=[requirement])


def test_a_thousand_requirements_are_refused() -> None:
    with pytest.raises(ValidationError, match="at most 100 items"):
        job(requirements=[f"pkg{i}" for i in range(1000)])


def test_names_with_specifiers_extras_and_markers_are_accepted() -> None:
    spec = job(environment="science", requirements=[
        "numpy", "scipy>=1.11,<2", "pandas[excel]==2.2.*", 'tomli; python_version < "3.11"'])
    assert spec.environment == "science" and len(spec.requirements) == 4


@pytest.mark.parametrize("fields", [{"digest": "../" * 21 + "x"}, {"digest": "AB" * 32},
                                    {"name": "../etc"}, {"python": "3" * 100}])
def test_a_prepared_environment_names_only_a_digest_below_the_environments_directory(
        fields: dict[str, str]) -> None:
    from workflows.contracts.environments import PreparedEnvironment

    with pytest.raises(ValidationError):
        PreparedEnvironment.model_validate(fields)
