"""The errors of skill folders: one for the caller, listing every problem, one internal.

Import and export collect every problem they find before they give up, so a person fixes a
folder in one pass; ``SkillFileError`` carries that list. ``Problem`` stops the reading or
writing of one file and becomes one line of it.
"""

from __future__ import annotations


class SkillFileError(ValueError):
    """Skill folders could not be exported or imported; nothing was written or returned.

    Attributes:
        problems: one line per problem, each naming the folder or file and what is wrong.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(f"{count} with skill folders:\n" + "\n".join(f"- {p}" for p in problems))


class Problem(Exception):
    """One problem that stops reading or writing a file (collected into ``SkillFileError``)."""
