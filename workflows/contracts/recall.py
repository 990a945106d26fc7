"""What memory tells a planner: the rules and episodes of earlier runs that apply to a goal.

``recall_memory`` (reflection pool) reads memory's active semantic rules and failed episodes
and keeps those of task types that apply to the goal (and to the hypotheses a study has yet
to decide): a task type applies when at least half of its words, and at least two of them
(its only word, for a one-word type), are words of those texts, or when the task-type index
finds it similar. Each becomes one short note for the planner's "what earlier runs taught";
the notes are bounded in number and length, so a large memory never floods a prompt.
"""

from __future__ import annotations

from pydantic import Field

from workflows.contracts.base import MAX_GOAL_CHARS, Model

MAX_NOTES = 12
"""Notes the planner is given at most: rules first (most relevant, most confident), then
episodes."""
NOTE_CHARS = 600
"""The longest note; a longer one is cut, saying so."""
MAX_TOPICS = 10
TOPIC_CHARS = 1000


class RecallInput(Model):
    """Input of ``recall_memory``: what the plan is for."""

    run_id: str
    goal: str = Field(min_length=1, max_length=MAX_GOAL_CHARS)
    topics: list[str] = Field(default_factory=list[str], max_length=MAX_TOPICS)
    """More texts the plan is about: the statements of the hypotheses a study has open."""
    max_notes: int = Field(default=MAX_NOTES, ge=0, le=MAX_NOTES)


class RecallAnswer(Model):
    """Notes for the planner, and where they came from."""

    notes: list[str] = Field(default_factory=list[str])
    rules: list[str] = Field(default_factory=list[str])
    """The ids of the rules the notes give."""
    task_types: list[str] = Field(default_factory=list[str])
    """The task types found to apply to the goal."""
    warnings: list[str] = Field(default_factory=list[str])
