"""Validation errors in words: field paths and messages (pure; no server)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError, field_validator

from workflows.common.validation import FieldError, field_errors, field_path, worded_errors
from workflows.contracts.gates import GateDecision


class Item(BaseModel):
    name: str
    size: int


class Box(BaseModel):
    items: list[Item]


def refusal(value: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        Box.model_validate(value)
    return caught.value


def test_a_location_reads_as_a_dotted_path_or_as_the_whole() -> None:
    assert field_path(("items", 2, "size"), whole="box") == "items.2.size"
    assert field_path((), whole="box") == "box"


def test_each_error_names_its_field_and_pydantic_message() -> None:
    errors = field_errors(refusal({"items": [{"name": "a", "size": "big"}, {"size": 1}]}))
    assert errors == [
        FieldError("items.0.size",
                   "Input should be a valid integer, unable to parse string as an integer"),
        FieldError("items.1.name", "Field required")]
    assert str(errors[1]) == "items.1.name: Field required"


def test_most_keeps_the_first_errors_and_whole_names_the_value_itself() -> None:
    empty: dict[str, str] = {}
    assert field_errors(refusal({"items": [empty, empty]}), most=1) == [
        FieldError("items.0.name", "Field required")]
    assert field_errors(refusal(3), whole="(box)") == [
        FieldError("(box)", "Input should be a valid dictionary or instance of Box")]


class Named(BaseModel):
    name: str

    @field_validator("name")
    @classmethod
    def _short(cls, text: str) -> str:
        if len(text) > 3:
            raise ValueError(f"name {text!r} is longer than 3 characters")
        return text


def test_plain_drops_pydantics_prefix_before_a_validators_own_message() -> None:
    with pytest.raises(ValidationError) as caught:
        Named(name="abcd")
    assert field_errors(caught.value) == [
        FieldError("name", "Value error, name 'abcd' is longer than 3 characters")]
    assert field_errors(caught.value, plain=True) == [
        FieldError("name", "name 'abcd' is longer than 3 characters")]


def test_worded_errors_name_an_unknown_field_with_the_nearest_and_a_missing_one() -> None:
    with pytest.raises(ValidationError) as caught:
        GateDecision.model_validate({"gate": "result", "by": "ada", "task": "a",
                                     "set": {"args.x": [1]}})
    words = worded_errors(caught.value, GateDecision, whole="payload")
    assert words[0] == "missing field 'decision'"
    assert words[-1].startswith("unknown field 'task' (did you mean 'task_id'? fields: gate, ")
    assert all(w.startswith("set.args.x") for w in words[1:-1]), words  # pydantic's words
    assert worded_errors(caught.value, GateDecision, plain=False)[0] == "decision: Field required"
