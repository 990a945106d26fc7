"""Parsing a job's source: one parse at a time in the process, no warning let out."""

from __future__ import annotations

import ast
import threading
import warnings

import pytest

from workflows.contracts import pysource
from workflows.contracts.pysource import parse_python


def test_a_second_thread_waits_while_one_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    inside = threading.Event()
    release = threading.Event()
    entered: list[str] = []
    real = ast.parse

    def held(source: str, filename: str = "<unknown>") -> ast.Module:
        entered.append(source)
        if source == "first = 1":
            inside.set()
            assert release.wait(10)
        return real(source, filename=filename)

    monkeypatch.setattr(pysource.ast, "parse", held)
    first = threading.Thread(target=parse_python, args=("first = 1",))
    second = threading.Thread(target=parse_python, args=("second = 2",))
    first.start()
    assert inside.wait(10)
    second.start()
    second.join(0.2)  # given every chance to enter, it must still be waiting
    assert second.is_alive() and entered == ["first = 1"]
    release.set()
    first.join(10)
    second.join(10)
    assert entered == ["first = 1", "second = 2"]


def test_an_invalid_escape_neither_warns_nor_fails_under_error_filters() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tree = parse_python('pattern = "\\d+"\n', "job.py")
    assert isinstance(tree.body[0], ast.Assign)


@pytest.mark.parametrize("source", ["def (:", "x = 1\0"])
def test_source_that_is_not_python_raises_what_its_callers_catch(source: str) -> None:
    with pytest.raises((SyntaxError, ValueError)):  # a null byte: ValueError on some releases
        parse_python(source)


def test_the_lock_is_free_again_after_a_failed_parse() -> None:
    with pytest.raises(SyntaxError):
        parse_python("def (:")
    assert not pysource._LOCK.locked()  # pyright: ignore[reportPrivateUsage]
    assert parse_python("y = 2").body
