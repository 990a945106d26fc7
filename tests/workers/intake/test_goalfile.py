"""Goals and data files: everything wrong is refused before anything starts."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from workers.intake.goalfile import (
    MAX_DATA_BYTES,
    MAX_DATA_FILES,
    GoalError,
    check_goal,
    goal_digest,
    goal_name,
    is_plan_target,
    load_goal,
    read_data,
    read_data_file,
)
from workflows.contracts.roles import DATA_HEAD_CHARS, MAX_GOAL_CHARS

LIMIT = 1_500_000


def test_goal_is_stripped_and_keeps_newlines_and_tabs() -> None:
    assert check_goal("  compare\tthe species\nby sepal length \n") == (
        "compare\tthe species\nby sepal length")


@pytest.mark.parametrize(("text", "message"), [
    ("", "the research goal is empty"),
    (" \n\t ", "the research goal is empty"),
    ("x" * (MAX_GOAL_CHARS + 1), "8,001 characters, over the 8,000-character limit"),
    ("compare\x00species", "a control character (U+0000) at character 8"),
    ("compare\x1b[31mspecies", "a control character (U+001B) at character 8"),
    ("line one\r\nline two", "a control character (U+000D) at character 9"),
    ("compare \u202especies", "a bidirectional-text control (U+202E)"),
    ("compare \udcffspecies", "bytes that are not valid UTF-8"),
])
def test_bad_goals_are_refused(text: str, message: str) -> None:
    with pytest.raises(GoalError, match="the research goal") as caught:
        check_goal(text)
    assert message in str(caught.value)


def test_a_goal_of_exactly_the_limit_is_taken() -> None:
    assert len(check_goal("y" * MAX_GOAL_CHARS)) == MAX_GOAL_CHARS


@pytest.mark.parametrize(("goal", "name"), [
    ("Does sepal length differ between iris species?",
     "goal-does-sepal-length-differ-between"),
    ("Qu'est-ce qui différencie les espèces ?", "goal-qu-est-ce-qui-diff-rencie-les-esp"),
    ("鸢尾花的萼片长度", "goal"),
    ("x" * 100, "goal-" + "x" * 35),
    ("R² of petal width ~ petal length", "goal-r-of-petal-width-petal-length"),
])
def test_goal_names_are_short_ascii_slugs(goal: str, name: str) -> None:
    assert goal_name(goal) == name
    assert len(goal_name(goal)) <= 40


def write(path: Path, data: bytes | str) -> Path:
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def test_text_file_is_pinned_with_its_first_characters(tmp_path: Path) -> None:
    body = "sepal_length,species\n" + "5.1,setosa\n" * 500
    path = write(tmp_path / "iris.csv", body)
    item = read_data_file(path)
    assert item.name == "iris.csv"
    assert item.path == str(path.resolve())
    assert item.size == len(body.encode())
    assert item.sha256 == hashlib.sha256(body.encode()).hexdigest()
    assert item.head == body[:DATA_HEAD_CHARS]


def test_binary_files_have_no_head(tmp_path: Path) -> None:
    assert read_data_file(write(tmp_path / "a.bin", b"\x89PNG\r\n\x1a\n\xff\xfe")).head == ""
    assert read_data_file(write(tmp_path / "b.bin", b"text\x00with a NUL")).head == ""
    late = b"a" * (3 << 20) + b"\xff"  # invalid UTF-8 far past the head still means binary
    assert read_data_file(write(tmp_path / "c.bin", late)).head == ""


def test_a_character_split_across_read_chunks_is_still_text(tmp_path: Path) -> None:
    body = "a" * ((1 << 20) - 1) + "é" + "b" * 10
    assert read_data_file(write(tmp_path / "wide.txt", body)).head == "a" * DATA_HEAD_CHARS


def test_a_link_keeps_the_name_it_was_given(tmp_path: Path) -> None:
    target = write(tmp_path / "iris-2024.csv", "a,b\n")
    link = tmp_path / "iris.csv"
    link.symlink_to(target)
    item = read_data_file(link)
    assert (item.name, item.path) == ("iris.csv", str(target))


def test_missing_directory_pipe_and_oversize_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(GoalError, match=r"nope\.csv: no such file"):
        read_data_file(tmp_path / "nope.csv")
    with pytest.raises(GoalError, match="is a directory"):
        read_data_file(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(GoalError, match="not a regular file"):
        read_data_file(tmp_path / "pipe")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    with pytest.raises(GoalError, match="not a regular file"):
        read_data_file(tmp_path / "dangling")
    big = tmp_path / "big.csv"
    with big.open("wb") as handle:
        handle.truncate(MAX_DATA_BYTES + 1)  # sparse: no 50 MB written
    with pytest.raises(GoalError, match=r"50,000,001 bytes is over the 50,000,000-byte limit"):
        read_data_file(big)


def test_file_names_with_control_characters_are_refused(tmp_path: Path) -> None:
    with pytest.raises(GoalError, match="the file name contains a tab or newline"):
        read_data_file(write(tmp_path / "a\nb.csv", "x"))
    with pytest.raises(GoalError, match=r"a control character \(U\+001B\)"):
        read_data_file(write(tmp_path / "a\x1bb.csv", "x"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "secret.csv", "x")
    path.chmod(0)
    with pytest.raises(GoalError, match="cannot read it"):
        read_data_file(path)


def test_duplicate_names_and_too_many_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = write(tmp_path / "a" / "x.csv", "1")
    two = write(tmp_path / "b" / "x.csv", "2")
    with pytest.raises(GoalError, match=r"another data file is also named 'x\.csv'"):
        read_data([one, two])
    with pytest.raises(GoalError, match="another data file is also named"):
        read_data([one, one])
    with pytest.raises(GoalError, match=f"at most {MAX_DATA_FILES}"):
        read_data([one] * (MAX_DATA_FILES + 1))


def test_identity_covers_goal_and_data_but_not_their_order(tmp_path: Path) -> None:
    a = read_data_file(write(tmp_path / "a.csv", "1"))
    b = read_data_file(write(tmp_path / "b.csv", "2"))
    assert goal_digest("g", [a, b]) == goal_digest("g", [b, a])
    assert goal_digest("g", [a, b]) != goal_digest("h", [a, b])
    assert goal_digest("g", [a]) != goal_digest("g", [a, b])
    changed = read_data_file(write(tmp_path / "a.csv", "3"))
    assert goal_digest("g", [changed, b]) != goal_digest("g", [a, b])


def test_load_goal_builds_a_run_input_without_a_plan(tmp_path: Path) -> None:
    data = write(tmp_path / "iris.csv", "a,b\n1,2\n")
    req = load_goal("  Is a larger than b?  ", [data], max_bytes=LIMIT)
    assert (req.plan, req.goal, req.plan_name) == (None, "Is a larger than b?",
                                                   "goal-is-a-larger-than-b")
    assert [f.name for f in req.data] == ["iris.csv"]
    assert req.plan_sha256 == goal_digest("Is a larger than b?", req.data)
    assert load_goal("Is a larger than b?", [data], max_bytes=LIMIT).plan_sha256 == (
        req.plan_sha256)


def test_a_goal_over_the_payload_limit_is_refused(tmp_path: Path) -> None:
    files = [write(tmp_path / f"f{i}.csv", "x" * 3000) for i in range(5)]
    with pytest.raises(GoalError, match="over the 4,096-byte limit"):
        load_goal("compare them", files, max_bytes=4096)


def test_plan_targets_are_json_names_or_existing_files(tmp_path: Path) -> None:
    plan = write(tmp_path / "plan", "{}")
    assert is_plan_target(str(plan))
    assert is_plan_target("missing.json")
    assert not is_plan_target("does sepal length differ?")
    assert not is_plan_target("x" * 5000)  # too long for a file name: a goal, no error
    assert not is_plan_target("nul\x00byte")


def test_data_files_are_put_in_the_artifact_store_under_their_pin(tmp_path: Path) -> None:
    from activities.artifacts.store import LocalArtifactStore

    store = LocalArtifactStore(tmp_path / "store")
    data = write(tmp_path / "iris.csv", "a,b\n1,2\n")
    req = load_goal("Is a larger than b?", [data], max_bytes=LIMIT, store=store)
    [pinned] = req.data
    with store.open(pinned.sha256) as stored:
        assert stored.read() == b"a,b\n1,2\n"
    assert req == load_goal("Is a larger than b?", [data], max_bytes=LIMIT)


def test_a_store_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    from activities.artifacts.store import LocalArtifactStore

    write(tmp_path / "not-a-dir", "")
    data = write(tmp_path / "iris.csv", "a,b\n1,2\n")
    with pytest.raises(GoalError, match=r"--data .*iris\.csv: cannot store it in the artifact "
                                        r"store .*not-a-dir.*must be writable"):
        load_goal("g", [data], max_bytes=LIMIT,
                  store=LocalArtifactStore(tmp_path / "not-a-dir" / "store"))


def test_an_answer_format_is_added_to_the_goal_and_kept_for_the_answer(tmp_path: Path) -> None:
    data = tmp_path / "a.csv"
    data.write_text("a,b\n1,2\n")
    req = load_goal("How big is a?", [data], max_bytes=LIMIT, answer_format=" @a[a] ")
    assert (req.goal, req.answer_format) == ("How big is a?\n\nAnswer format: @a[a]", "@a[a]")
    assert load_goal("How big is a?", [data], max_bytes=LIMIT).answer_format is None
    with pytest.raises(GoalError, match="names no field"):
        load_goal("How big is a?", [data], max_bytes=LIMIT, answer_format="a number")
