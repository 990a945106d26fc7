"""What a subagent's task carries of it: its instructions' bound, and the fixes it tried.

How the subagent's recovery memory is chosen from and learns is workflow logic, in
:mod:`workflows.library.subagents`; these are the models a task's result and the library's
outcomes carry.
"""

from __future__ import annotations

from typing import Literal

from workflows.contracts.base import Model
from workflows.contracts.reflection import PatchChange

INSTRUCTIONS_CHARS = 2000
"""Characters of a subagent's instructions its task carries (and its coder is shown)."""

TryResult = Literal["applied", "cured", "failed", "refused"]
"""``applied``: the job was patched but never ran again (the task ended first); ``cured``:
the run after it succeeded; ``failed``: that run failed too; ``refused``: the guardrails
refused the patched job, so it never ran."""


class MemoryTry(Model):
    """One remembered fix a task run as a subagent tried, and what came of it."""

    fix: PatchChange
    """The fix as the subagent remembers it."""
    change: PatchChange | None = None
    """The change it made, or would have made, to this task's job."""
    patch_id: str = ""
    result: TryResult = "applied"
    reason: str = ""
    """Why the guardrails refused it (``refused`` only)."""

    @property
    def missed(self) -> bool:
        """Whether this try counts against the fix (it failed or was refused)."""
        return self.result in ("failed", "refused")
