"""The base of every contract, and the strict variant for what people write.

Contracts travel between workflows, activities and saved histories, so by default a field a
reader does not know is ignored: a newer writer never breaks an older reader or a replay.
What people write by hand (plans, run policies, gate decisions) is held to
:class:`StrictModel` instead, which refuses an unknown field: a typo must not pass silently.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, TypeVar, cast

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from workflows.contracts.plaintext import plain_text

T = TypeVar("T")
Scalar = str | int | float | bool
"""A plain value: a job argument, a metric checked, a modification."""
BY_CHARS = 128
"""The longest name a person may give as who decided or asked."""
COMMENT_CHARS = 4000
"""The longest comment a decision or request may carry."""
MAX_GOAL_CHARS = 8000
"""The longest research goal a run or a study may be given."""
Channel = Literal["cli", "temporal", "python"]
"""How a person's decision reached Assay: the ``assay`` CLI, the Python client, or anything
else that signals the workflow (``temporal workflow signal``, the Web UI): a decision that
names no channel is taken to have come that way."""
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
    """Base for contracts: unknown fields from newer writers are ignored, not fatal.

    A contract's validator is built at its first use, not when its class is made
    (``defer_build``): the CLI imports most contracts and uses a few, and building them all
    took about half of its start. A process that runs workflows must build them all once it
    has imported its workflows (:func:`build_models`; a pool's worker does as it starts): a
    contract's first use inside the workflow sandbox cannot build it, since the sandbox's
    modules need not include the contract's own, where its annotations' names are found.
    """

    model_config = ConfigDict(extra="ignore", defer_build=True)


class StrictModel(Model):
    """Base for what people write: an unknown field is refused (a typo must not pass)."""

    model_config = ConfigDict(extra="forbid")


def build_models() -> int:
    """Build the validator of every contract imported so far that has none yet; how many."""
    built = 0
    pending: list[type[Model]] = [Model]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if not cls.__pydantic_complete__ and cls.model_rebuild(raise_errors=False):
            built += 1
    return built


def via(request: T, channel: Channel) -> T:
    """``request`` naming ``channel`` as how it was sent, unless it names one already.

    Anything without a ``channel`` field (a plan, a plain dict) is returned as it is.
    """
    if not isinstance(request, BaseModel) or "channel" not in type(request).model_fields:
        return request
    if getattr(request, "channel", None) is not None:
        return request
    return cast("T", request.model_copy(update={"channel": channel}))


class Decided(Model):
    """A person's mark on a decision: who, when, what they said, and through which channel."""

    by: PlainText
    at: datetime | None = None
    comment: PlainText = ""
    channel: Channel = "temporal"

    def text(self, comment_chars: int = 300) -> str:
        """``ada via cli, 2026-11-28 09:30 UTC: "go on"`` for reports and status lines."""
        when = f", {self.at:%Y-%m-%d %H:%M} UTC" if self.at else ""
        comment = " ".join(self.comment.split())
        if len(comment) > comment_chars:
            comment = comment[:comment_chars - 1] + "…"
        said = f': "{comment}"' if comment else ""
        return f"{self.by} via {self.channel}{when}{said}"
