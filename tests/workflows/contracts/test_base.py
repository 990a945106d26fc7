"""The two contract bases: unknown fields ignored, or refused (pure; no server)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from workflows.contracts.base import Model, StrictModel
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
