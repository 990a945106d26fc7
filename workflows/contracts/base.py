"""The base of every contract, and the strict variant for what people write.

Contracts travel between workflows, activities and saved histories, so by default a field a
reader does not know is ignored: a newer writer never breaks an older reader or a replay.
What people write by hand (plans, run policies, gate decisions) is held to
:class:`StrictModel` instead, which refuses an unknown field: a typo must not pass silently.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Scalar = str | int | float | bool
"""A plain value: a job argument, a metric checked, a modification."""
BY_CHARS = 128
"""The longest name a person may give as who decided or asked."""
COMMENT_CHARS = 4000
"""The longest comment a decision or request may carry."""


class Model(BaseModel):
    """Base for contracts: unknown fields from newer writers are ignored, not fatal."""

    model_config = ConfigDict(extra="ignore")


class StrictModel(Model):
    """Base for what people write: an unknown field is refused (a typo must not pass)."""

    model_config = ConfigDict(extra="forbid")
