"""What people type to change a job: values, fields, sweeps, checkpoints, metrics, names, code."""

from __future__ import annotations

from pathlib import Path

import pytest

from workers.cli.fields import (
    VALUE_CHARS,
    InputError,
    check_name,
    name_of,
    parse_checkpoint,
    parse_metric,
    parse_sets,
    parse_sweep,
    parse_value,
    read_code,
    unique,
    value_name,
)
from workflows.contracts.alternatives import CODE_CHARS, MAX_BRANCHES, MAX_SETS, Metric


@pytest.mark.parametrize(("text", "value"), [
    ("0.01", 0.01), ("3", 3), ("-2", -2), ("true", True), ("false", False),
    ("adam", "adam"), ('"3"', "3"), ('""', ""), ("null", "null"), ("[1, 2]", "[1, 2]"),
    ("NaN", "NaN"), ("Infinity", "Infinity"), ("1e-05", 1e-05), ("a=b", "a=b"),
])
def test_values_are_json_scalars_when_they_parse_and_text_otherwise(text: str,
                                                                    value: object) -> None:
    parsed = parse_value(text, "--set args.x")
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize(("text", "message"), [
    ("", "has no value"),
    ("1e999", "is not a finite number"),
    ("x" * (VALUE_CHARS + 1), f"at most {VALUE_CHARS:,}"),
    ("a\x00b", "control characters"),
    ("\x1b[31mred", "control characters"),
    ("two\nlines", "control characters"),
])
def test_empty_infinite_giant_and_hostile_values_are_refused(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_value(text, "--set args.x")


def test_sets_target_args_resources_or_a_downstream_tasks_args() -> None:
    assert parse_sets(["args.lr=0.1", "resources.memory_mb=2048", "4:args.epochs=3",
                       "resources.cpus = 2"]) == {
        "args.lr": 0.1, "resources.memory_mb": 2048, "4:args.epochs": 3, "resources.cpus": 2}


@pytest.mark.parametrize(("item", "message"), [
    ("args.lr", "has no '='"),
    ("lr=0.1", "is no field"),
    ("args.=1", "is no field"),
    ("resources.gpus=1", "is no field"),
    ("job.code=x", "is no field"),
    ("4:resources.disk=1", "is no field"),
    ("../x:args.a=1", "is no field"),
    ("args.a\x00=1", "control characters"),
    (f"args.{'a' * 65}=1", "is no field"),
])
def test_malformed_fields_are_refused_with_the_forms_allowed(item: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as err:
        parse_sets([item])
    if message == "is no field":
        assert "args.NAME, resources.memory_mb|timeout_s|cpus, or TASK:args.NAME" in str(err.value)


def test_a_field_set_twice_or_too_many_sets_are_refused() -> None:
    with pytest.raises(InputError, match=r"args\.lr is given twice"):
        parse_sets(["args.lr=1", "args.lr=2"])
    with pytest.raises(InputError, match=f"at most {MAX_SETS}"):
        parse_sets([f"args.a{n}=1" for n in range(MAX_SETS + 1)])


def test_a_sweep_keeps_each_values_text_and_value_in_order() -> None:
    field, values = parse_sweep("args.lr=0.001, 0.01,0.1")
    assert field == "args.lr"
    assert values == [("0.001", 0.001), ("0.01", 0.01), ("0.1", 0.1)]


@pytest.mark.parametrize(("item", "message"), [
    ("args.lr=", "has no values"),
    ("args.lr=, ,", "has no values"),
    ("args.lr=1,,2", "value 2 has no value"),
    ("args.lr=0.1,0.10", "has the value 0.10 twice"),
    ("args.lr=" + ",".join(str(n) for n in range(MAX_BRANCHES + 1)),
     f"has {MAX_BRANCHES + 1} values; one request starts at most {MAX_BRANCHES}"),
    ("lr=1,2", "is no field"),
])
def test_empty_duplicate_and_oversize_sweeps_are_refused(item: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_sweep(item)


@pytest.mark.parametrize(("text", "parsed"), [
    ("3", ("3", "planned")), ("3:execute", ("3", "execute")), ("3:verify", ("3", "verify")),
    ("prep.v2:planned", ("prep.v2", "planned")),
])
def test_checkpoints_are_a_task_and_a_phase(text: str, parsed: tuple[str, str]) -> None:
    assert parse_checkpoint(text) == parsed


@pytest.mark.parametrize(("text", "message"), [
    ("3:run", "the phase is one of planned, execute, verify"),
    (":execute", "write a task id"),
    ("-3", "write a task id"),
    ("a/b", "write a task id"),
    ("x" * 65, "write a task id"),
    ("3\x07", "control characters"),
])
def test_malformed_checkpoints_are_refused(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_checkpoint(text)


def test_metrics_name_a_direction_or_maximize() -> None:
    assert parse_metric("accuracy") == Metric(name="accuracy")
    assert parse_metric("val:loss:minimize") == Metric(name="val:loss", direction="minimize")
    with pytest.raises(InputError, match="maximize or minimize"):
        parse_metric("loss:down")
    with pytest.raises(InputError, match="1 to 128"):
        parse_metric(":minimize")


@pytest.mark.parametrize(("name", "message"), [
    ("main", "names the run's own line"), ("-x", "a branch name is"), ("a b", "a branch name"),
    ("x" * 49, "a branch name is 1 to 48"), ("", "a branch name"), ("a\tb", "control"),
])
def test_invalid_or_reserved_names_are_refused(name: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        check_name(name)


def test_default_names_come_from_the_field_and_value_and_stay_valid_and_unique() -> None:
    assert value_name("args.lr", "0.01") == "lr-0.01"
    assert value_name("4:args.epochs", "3") == "epochs-3"
    assert value_name("resources.memory_mb", "2048") == "memory_mb-2048"
    assert value_name("args.opt", "adam w/ decay") == "opt-adam-w-decay"
    assert value_name("args.lr", "0.1", "try") == "try-0.1"
    assert len(value_name("args.x", "y" * 100)) == 48
    assert name_of("", "...") == "branch"
    assert unique(["a", "a", "b"], {"b"}) == ["a", "a-2", "b-2"]
    assert unique(["x" * 48, "x" * 48], set()) == ["x" * 48, "x" * 46 + "-2"]


def test_code_must_be_an_existing_non_empty_utf8_file_within_the_limit(tmp_path: Path) -> None:
    good = tmp_path / "job.py"
    good.write_text("print('hi')\n")
    assert read_code(good) == "print('hi')\n"
    cases = {"missing.py": (None, "no such file"), "empty.py": (b"  \n", "is empty"),
             "binary.py": (b"\xff\xfe\x00", "not UTF-8"),
             "long.py": (b"#" * (CODE_CHARS + 1), f"at most {CODE_CHARS:,}"),
             "huge.py": (b"#" * (4 * CODE_CHARS + 1), "bytes; job code is at most")}
    for name, (content, message) in cases.items():
        if content is not None:
            (tmp_path / name).write_bytes(content)
        with pytest.raises(InputError, match=message):
            read_code(tmp_path / name)
    with pytest.raises(InputError, match="no such file"):
        read_code(tmp_path)  # a folder
