"""The first lines of upstream text artifacts: what is read, what is left out, and how a
dependent task's coder is told what its dependencies found."""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.agents.previews import (
    CUT_LINE,
    PREVIEW_BYTES,
    PREVIEW_LINE_CHARS,
    PREVIEW_LINES,
    cut_note,
    previews,
    stored_lines,
)
from activities.agents.render import code_message
from activities.artifacts.store import LocalArtifactStore
from tests.activities.agents.test_agents import RUN_ID, code_request
from workflows.contracts.context import TaskDigest
from workflows.contracts.execution import DependencyArtifact


def first_lines(path: Path) -> str | None:
    """The preview of a file as the agents worker reads it: put in a store, read by digest."""
    store = LocalArtifactStore(path.parent / ".store")
    try:
        return stored_lines(store, store.put(path).sha256)
    except OSError:
        return None


def test_a_text_file_shows_its_first_lines_cut_to_width(tmp_path: Path) -> None:
    path = tmp_path / "table.csv"
    path.write_text("x,y\n" + "".join(f"{i},{'y' * 300}\n" for i in range(20)))
    lines = (first_lines(path) or "").splitlines()
    assert len(lines) == PREVIEW_LINES + 1 and lines[0] == "x,y"
    assert lines[1] == "0," + "y" * (PREVIEW_LINE_CHARS - 2) + CUT_LINE
    assert lines[-1] == "[… first 5 lines shown; the other 5,430 of its 6,074 bytes are not shown]"


def test_a_short_file_with_a_long_line_says_how_much_of_it_is_not_shown(tmp_path: Path) -> None:
    path = tmp_path / "wide.json"
    path.write_text('{"coefficients": [' + ", ".join(["0.123456"] * 40) + "]}\n")
    shown = (first_lines(path) or "").splitlines()
    assert shown[0].endswith(CUT_LINE)
    assert shown[1] == "[… first 1 line shown; the other 259 of its 419 bytes are not shown]"


def test_a_short_file_is_shown_whole_without_a_note(tmp_path: Path) -> None:
    path = tmp_path / "summary.txt"
    path.write_text("rows 24\nmean 3.1\n")
    assert first_lines(path) == "rows 24\nmean 3.1"


@pytest.mark.parametrize(("content", "why"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary (a NUL byte)"),
    (b"caf\xe9 au lait\n", "not UTF-8"),
    (b"", "empty"),
])
def test_files_that_are_not_text_are_left_out(tmp_path: Path, content: bytes,
                                              why: str) -> None:
    path = tmp_path / "file"
    path.write_bytes(content)
    assert not first_lines(path), why


def test_a_digest_the_store_lacks_is_left_out(tmp_path: Path) -> None:
    assert stored_lines(LocalArtifactStore(tmp_path / "store"), "0" * 64) is None


def test_a_read_that_ends_inside_a_character_keeps_the_text_before_it(tmp_path: Path) -> None:
    path = tmp_path / "wide.txt"
    path.write_bytes(b"a" * (PREVIEW_BYTES - 1) + "é".encode() + b"more\n")
    assert first_lines(path) == ("a" * PREVIEW_LINE_CHARS + CUT_LINE + "\n"
                                 + cut_note(1, PREVIEW_LINE_CHARS, PREVIEW_BYTES + 6))


def upstream(tmp_path: Path) -> TaskDigest:
    (tmp_path / "summary.json").write_text('{\n  "rows": 24\n}\n')
    (tmp_path / "plot.png").write_bytes(b"\x89PNG\x00")
    files = [DependencyArtifact(task_id="describe", name=n, path=str(tmp_path / n),
                                sha256="0" * 64) for n in ("summary.json", "plot.png")]
    return TaskDigest(task_id="describe", action="Describe the table", status="completed",
                      metrics={"rows": 24}, checks=["rows == 24: pass"],
                      artifacts=["summary.json", "plot.png"],
                      stdout_tail=f"wrote {tmp_path}/summary.json under {RUN_ID}\n",
                      files=files)


def test_a_dependent_tasks_coder_reads_what_its_dependency_found(tmp_path: Path) -> None:
    digest = upstream(tmp_path)
    store = LocalArtifactStore(tmp_path / "store")
    for ref in digest.files:
        ref.sha256 = store.put(Path(ref.path)).sha256
    shown = previews([digest], store)
    assert set(shown) == {("describe", "summary.json")}
    text = code_message(code_request(upstream=[digest]), shown)
    told = text[text.index("## What dependency describe found"):]
    assert "- status: completed" in told and '- metrics: {"rows": 24}' in told
    assert "- rows == 24: pass" in told
    assert 'summary.json:\n```\n{\n  "rows": 24\n}\n```' in told
    assert "plot.png:\n" not in told  # named among the artifacts, never previewed
    assert RUN_ID not in text


def test_a_task_without_dependencies_is_asked_as_before() -> None:
    assert "What dependency" not in code_message(code_request())
    assert code_message(code_request(), {}) == code_message(code_request(upstream=[]))


def test_with_a_store_the_preview_comes_from_it_by_digest_not_from_the_path(
        tmp_path: Path) -> None:
    digest = upstream(tmp_path)
    store = LocalArtifactStore(tmp_path / "store")
    summary = tmp_path / "summary.json"
    kept = store.put(summary)
    digest.files[0].sha256 = kept.sha256
    summary.unlink()  # written on the sandbox's host, not this one
    assert previews([digest], store) == {("describe", "summary.json"): '{\n  "rows": 24\n}'}
    assert previews([digest]) == {}  # no store: no preview, and never the path


def test_a_path_a_client_sets_is_never_read(tmp_path: Path) -> None:
    digest = upstream(tmp_path)  # real files at the paths it names, unknown digests
    assert previews([digest], LocalArtifactStore(tmp_path / "store")) == {}
    assert previews([digest]) == {}
