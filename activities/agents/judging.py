"""The hypothesis judge's message: the question, the gold hypothesis and the answer to judge."""

from __future__ import annotations

from activities.agents.prompting import message, section
from workflows.contracts.judging import JudgeRequest


def judge_message(req: JudgeRequest) -> str:
    """The judge's facts, in a fixed order."""
    return message(section("Question", req.question), section("Gold hypothesis", req.gold),
                   section("Answer to judge", req.answer))
