"""The study synthesizer's request and answer: a study's conclusion, every statement cited.

When a study ends, however it ends, the study synthesizer (a model role on the writing tier)
is asked for the study's answer from its record: the hypothesis tree with its verdicts, each
cycle's tasks and their verified metrics (with their intervals), the acceptance criteria, the
key metric and how the study ended. Its answer is a short conclusion and a list of
statements (what was found, how sure, what is still open), each citing the cycle, task and
verified metric or artifact behind it; a citation of anything the record does not hold is
sent back for repair. Without an answer the deterministic synthesis stands
(``activities.reports.study_synthesis``). The request and answer of the role are in
``workflows.contracts.cycles`` beside the study's other contracts.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from workflows.contracts.base import Model

STATEMENT_CHARS = 1200
CONCLUSION_CHARS = 2000
MAX_STATEMENTS = 20
MAX_CITES = 8

Kind = Literal["found", "sure", "open"]
"""What a statement says: what was found, how sure, or what is still open."""


class Cite(Model):
    """The evidence behind a statement: a task of a cycle, and its metric or artifact."""

    cycle: int = Field(ge=1, description="The cycle the task ran in.")
    task_id: str = Field(min_length=1, max_length=128)
    metric: str = Field(default="", max_length=128,
                        description="A verified metric of that task, as the request names it.")
    artifact: str = Field(default="", max_length=200,
                          description="Or an artifact of that task, as the request names it.")

    def shown(self) -> str:
        """``cycle 2, task fit: r2`` (or the artifact)."""
        what = self.metric or self.artifact
        return f"cycle {self.cycle}, task {self.task_id}" + (f": {what}" if what else "")


class Statement(Model):
    """One statement of the synthesis, with the evidence it rests on."""

    kind: Kind
    text: str = Field(min_length=1, max_length=STATEMENT_CHARS)
    cites: list[Cite] = Field(min_length=1, max_length=MAX_CITES)


class SynthesisOutput(Model):
    """What the study synthesizer answers (its tool schema)."""

    conclusion: str = Field(min_length=1, max_length=CONCLUSION_CHARS,
                            description="The study's answer to its question, in a few "
                                        "sentences: what was found and how sure it is.")
    statements: list[Statement] = Field(min_length=1, max_length=MAX_STATEMENTS)


class StudySynthesis(SynthesisOutput):
    """The study synthesizer's answer as the report keeps it."""

    model: str = ""
    """The model that wrote it."""
    unheld: list[str] = Field(default_factory=list[str])
    """Numbers of the answer no verified metric holds (the report writer fills it)."""
