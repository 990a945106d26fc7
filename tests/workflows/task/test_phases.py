"""The TaskWorkflow transition table."""

from __future__ import annotations

import itertools

import pytest

from workflows.task.phases import (
    TRANSITIONS,
    IllegalTransitionError,
    Phase,
    check_transition,
)


def reachable(start: Phase) -> set[Phase]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in TRANSITIONS[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_every_phase_is_reachable_from_intake_and_reaches_done() -> None:
    assert reachable(Phase.INTAKE) == set(Phase)
    assert all(Phase.DONE in reachable(p) for p in Phase)


def test_done_is_terminal_and_only_finalize_leads_there() -> None:
    assert TRANSITIONS[Phase.DONE] == frozenset()
    assert [p for p, nxt in TRANSITIONS.items() if Phase.DONE in nxt] == [Phase.FINALIZE]


def test_happy_path_is_legal() -> None:
    path = [Phase.INTAKE, Phase.IMPLEMENT, Phase.REVIEW, Phase.EXECUTE, Phase.VERIFY,
            Phase.FINALIZE, Phase.DONE]
    for current, nxt in itertools.pairwise(path):
        assert check_transition(current, nxt) is nxt


RETRY_SUBPHASES = [p for p in Phase if p.value.endswith("_retry")]


def test_review_execute_and_verify_each_have_a_retry_subphase() -> None:
    assert [p for p in Phase if set(RETRY_SUBPHASES) & TRANSITIONS[p]] == [
        Phase.REVIEW, Phase.EXECUTE, Phase.VERIFY]


@pytest.mark.parametrize("retry", RETRY_SUBPHASES)
def test_each_retry_subphase_goes_back_to_its_phase_or_ends(retry: Phase) -> None:
    back = [p for p in TRANSITIONS[retry] if retry in TRANSITIONS[p]]
    assert len(back) == 1, f"{retry} should go back to exactly the phase it retries: {back}"
    assert Phase.FINALIZE in TRANSITIONS[retry]


@pytest.mark.parametrize(("current", "nxt"), [
    (Phase.INTAKE, Phase.EXECUTE),
    (Phase.IMPLEMENT, Phase.EXECUTE),
    (Phase.REVIEW, Phase.VERIFY),
    (Phase.EXECUTE, Phase.REVIEW),
    (Phase.VERIFY, Phase.EXECUTE),
    (Phase.FINALIZE, Phase.REVIEW),
    (Phase.DONE, Phase.FINALIZE),
])
def test_illegal_moves_raise_naming_what_is_allowed(current: Phase, nxt: Phase) -> None:
    with pytest.raises(IllegalTransitionError, match=f"illegal phase change {current} -> {nxt}"):
        check_transition(current, nxt)
