"""The readable Markdown body of an exported SKILL.md."""

from __future__ import annotations

from pathlib import Path

from skills.folders import export_skills
from tests.skills.folders.samples import job_skill, subagent_skill


def test_export_body_is_readable_markdown(tmp_path: Path) -> None:
    folders = export_skills([job_skill(), subagent_skill()], tmp_path)
    body = (folders[0] / "SKILL.md").read_text(encoding="utf-8").split("---\n", 2)[2]
    for expected in ("# compare-lengths", "## When to use it", "When a goal asks whether",
                     "| seed | integer | 7 | 0 .. 2147483648 |",
                     "| column | enum | len | len, wid |",
                     "| data | file_path (data input) | t.csv | .csv |",
                     "Check: `p_value < 0.05`", "Artifacts: `comparison.json`",
                     "## Why it works", "1. planner (plan): chose a permutation test",
                     "python scripts/compare.py --data=t.csv --column=len",
                     "Source runs: run-1, run-2", "Used 4 times (3 succeeded)"):
        assert expected in body
    assert "Compare \\| lengths" not in body.split("\n")[2]  # the description line is prose
    agent = (folders[1] / "SKILL.md").read_text(encoding="utf-8")
    assert "## Instructions" in agent
    assert "`args.batch_size`: 64 -> 32 (out of memory)" in agent
