"""The base of every contract, and the strict variant for what people write.

Contracts travel between workflows, activities and saved histories, so by default a field a
reader does not know is ignored: a newer writer never breaks an older reader or a replay.
What people write by hand (plans, run policies, gate decisions) is held to
:class:`StrictModel` instead, which refuses an unknown field: a typo must not pass silently.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from workflows.common.plaintext import plain_text

Scalar = str | int | float | bool
"""A plain value: a job argument, a metric checked, a modification."""
BY_CHARS = 128
"""The longest name a person may give as who decided or asked."""
COMMENT_CHARS = 4000
"""The longest comment a decision or request may carry."""
MAX_GOAL_CHARS = 8000
"""The longest research goal a run or a study may be given."""
CheckOp = Literal["<", "<=", ">", ">=", "==", "!="]
"""How a check (or a hypothesis's test) compares a metric with its value."""


def _as_task_id(value: object) -> object:
    """Task ids may be written as numbers (as the seed plans do) or strings; keep strings."""
    if isinstance(value, bool):
        return value  # rejected by the str validator: True is not an id
    if isinstance(value, int):
        return str(value)
    return value


TaskId = Annotated[
    str,
    BeforeValidator(_as_task_id),
    Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"),
]
"""A task's id (a hypothesis's too): numbers as the seed plans write them are kept as text."""


def _plain(value: object) -> object:
    return plain_text(value) if isinstance(value, str) else value


PlainText = Annotated[str, BeforeValidator(_plain)]
"""Free text from outside (a plan, a goal, a signal): stored without escape sequences or
control characters, so every terminal and report downstream may show it as it is. Made plain
before its length is checked: an action of escape sequences alone is an empty action."""


class Model(BaseModel):
    """Base for contracts: unknown fields from newer writers are ignored, not fatal."""

    model_config = ConfigDict(extra="ignore")


class StrictModel(Model):
    """Base for what people write: an unknown field is refused (a typo must not pass)."""

    model_config = ConfigDict(extra="forbid")
