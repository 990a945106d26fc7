"""A guideline folder as another tool writes it: SKILL.md with front matter, references/."""

from __future__ import annotations

from pathlib import Path

NAME = "welch-comparison-guide"
RULE = "Compare two groups with Welch's t-test (scipy-free: compute it with statistics)."
SKILL_MD = f"""---
name: {NAME}
description: How to compare the means of two groups of measurements and report a p value.
---
# Comparing two groups

{RULE}

1. Read the table and split the value column by group.
2. Report the difference of the means, Welch's t and its p value in metrics.json.

See references/details.md for the degrees of freedom.
"""


def guideline_folder(root: Path) -> Path:
    """A foreign Agent Skills folder carrying guidance only (no script)."""
    folder = root / NAME
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (folder / "references" / "details.md").write_text(
        "Welch-Satterthwaite degrees of freedom.\n", encoding="utf-8")
    return root
