"""Import of folders other tools wrote: guideline skills, one script as a job."""

from __future__ import annotations

from pathlib import Path

from skills.folders import import_skills
from tests.skills.folders.samples import HANDWRITTEN, problems_of, simple, write_folder
from workflows.contracts.plan import JobSpec


def test_import_handwritten_skill_declaring_its_script_makes_a_job() -> None:
    (skill,) = import_skills(HANDWRITTEN / "tidy-csv")
    script = (HANDWRITTEN / "tidy-csv" / "scripts" / "tidy.py").read_text(encoding="utf-8")
    pattern = skill.pattern
    assert pattern.job == JobSpec(code=script, source=script, filename="tidy.py")
    assert pattern.kind == "skill"
    assert pattern.description.startswith("Clean a messy CSV export")
    assert pattern.context.startswith(pattern.description + "\n\nSpreadsheet and form exports")
    assert pattern.guideline.startswith("# Tidy a CSV export")
    assert pattern.guideline.endswith("References (read, not run): references/rules.md")
    assert pattern.signature.keywords == ["tidy", "csv"]
    assert pattern.preconditions.imports == ["argparse", "csv", "json", "pathlib"]
    assert (skill.status, skill.origin, skill.confidence) == ("candidate", "imported", 0.0)
    assert "another tool" in skill.note and pattern.license == "Apache-2.0"


def test_import_handwritten_skill_with_several_scripts_is_guideline_only() -> None:
    (skill,) = import_skills(HANDWRITTEN / "write-findings")
    assert skill.pattern.job is None
    assert "scripts/figures.py, scripts/render.sh" in skill.note
    assert "Scripts kept with the skill (not run): scripts/figures.py" in skill.pattern.guideline
    assert "references/template.md" in skill.pattern.guideline
    assert skill.pattern.context.endswith("Lead with the\nanswer to the question that was asked.")


def test_import_directory_of_handwritten_skills() -> None:
    names = [s.pattern.name for s in import_skills(HANDWRITTEN)]
    assert names == ["tidy-csv", "write-findings"]


def test_foreign_script_that_is_not_python_is_refused(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, "alpha", simple("alpha"), {
        "scripts/run.py": "def (:\n", "assay.json": '{"run": {"script": "scripts/run.py"}}'})
    assert problems_of(tmp_path) == [f"{folder / 'scripts' / 'run.py'}: is not valid Python "
                                     "(invalid syntax, line 1)"]
    (folder / "scripts" / "run.py").write_bytes(b"print('\xff')\n")
    assert "is not UTF-8 text" in problems_of(tmp_path)[0]
