"""What every command shares: tables for people and for scripts, times (no server)."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import pytest

from workers.cli.common import describe_command, print_table, table, when

HEADERS = ["id", "status", "body"]
ROWS = [["rule-1", "active", '{"a": [1]}'], ["r2", "-", "[bold]not markup[/bold]"]]


def test_a_table_is_aligned_columns_under_a_header_without_trailing_spaces() -> None:
    assert table(HEADERS, ROWS) == [
        "id      status  body",
        'rule-1  active  {"a": [1]}',
        "r2      -       [bold]not markup[/bold]"]
    assert table(["only"], []) == ["only"]


def test_piped_output_prints_the_plain_table(capsys: pytest.CaptureFixture[str]) -> None:
    print_table(HEADERS, ROWS)
    assert capsys.readouterr().out.splitlines() == table(HEADERS, ROWS)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_drawn_table_with_cells_shown_as_written(
        monkeypatch: pytest.MonkeyPatch) -> None:
    screen = Terminal()
    monkeypatch.setattr("sys.stdout", screen)
    print_table(HEADERS, ROWS)
    drawn = screen.getvalue()
    assert "[bold]not markup[/bold]" in drawn and '{"a": [1]}' in drawn
    assert drawn.splitlines() != table(HEADERS, ROWS)


def test_a_time_is_shown_to_the_second_or_as_a_dash() -> None:
    assert when(datetime(2025, 1, 2, 3, 4, 5, 678, tzinfo=UTC)) == "2025-01-02T03:04:05+00:00"
    assert when(None) == "-"


def test_the_temporal_command_it_suggests_names_assays_server(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEMPORAL_ADDRESS", "temporal.internal:7233")
    monkeypatch.setenv("ASSAY_TEMPORAL_NAMESPACE", "research")
    assert describe_command("assay-run-x") == (
        "temporal workflow describe --address temporal.internal:7233 --namespace research "
        "--workflow-id assay-run-x")
