"""The two contract bases: unknown fields ignored, or refused (pure; no server)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import ValidationError

from workflows.contracts.base import Model, StrictModel, build_models
from workflows.contracts.execution import Artifact
from workflows.contracts.gates import GateDecision
from workflows.contracts.plan import Plan
from workflows.contracts.policy import RunPolicy


class Reading(Model):
    value: int = 0


class Written(StrictModel):
    value: int = 0


def test_a_contract_ignores_a_field_from_a_newer_writer() -> None:
    assert Reading.model_validate({"value": 1, "added_later": True}) == Reading(value=1)
    artifact = Artifact.model_validate({"name": "a", "size": 1, "sha256": "0", "path": "/a",
                                        "added_later": 1})
    assert artifact.name == "a"


def test_what_people_write_refuses_an_unknown_field() -> None:
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        Written.model_validate({"value": 1, "valeu": 2})
    typos: list[tuple[type[StrictModel], dict[str, object]]] = [
        (Plan, {"decisions": [], "decisons": []}),
        (RunPolicy, {"max_paralel": 2}),
        (GateDecision, {"gate": "plan", "decision": "approve", "by": "ada", "comment": "",
                        "gat": "plan"})]
    for strict, typo in typos:
        with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
            strict.model_validate(typo)


BUILT_AFTER_IMPORT = """
import sys
import client.assay, workers.cli.main, workers.cli.status, workers.cli.progress
from workflows.contracts.base import Model
pending, built, seen = [Model], [], 0
while pending:
    cls = pending.pop()
    pending.extend(cls.__subclasses__())
    seen += 1
    if cls.__pydantic_complete__:
        built.append(cls.__qualname__)
print(seen, ",".join(built))
"""


def test_the_cli_imports_contracts_without_building_their_validators() -> None:
    # building every contract's validator was about half of the CLI's start
    found = subprocess.run([sys.executable, "-c", BUILT_AFTER_IMPORT], capture_output=True,
                           text=True, check=True, timeout=120)
    seen, built = found.stdout.split()[0], found.stdout.split()[1:]
    assert int(seen) > 100
    assert built == []


def test_a_worker_builds_every_contract_it_imported_once() -> None:
    class Later(Model):
        value: int = 0

    class Nested(Model):
        inner: Later = Later()

    assert not Nested.__pydantic_complete__
    assert build_models() >= 1
    assert Later.__pydantic_complete__ and Nested.__pydantic_complete__
    assert build_models() == 0


def test_a_contract_built_at_first_use_validates_as_one_built_at_once() -> None:
    class Deferred(StrictModel):
        value: int = 0

    assert not Deferred.__pydantic_complete__
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        Deferred.model_validate({"value": 1, "valeu": 2})
    assert Deferred.model_validate_json('{"value": 3}') == Deferred(value=3)
