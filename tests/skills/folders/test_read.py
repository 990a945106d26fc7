"""Import of many folders: discovery, the caller's status, all or nothing."""

from __future__ import annotations

from pathlib import Path

from skills.folders import export_skills, import_skills
from skills.folders.read import read_skills
from tests.skills.folders.samples import (
    guideline_skill,
    job_skill,
    problems_of,
    simple,
    write_folder,
)


def test_import_takes_the_status_the_caller_gives(tmp_path: Path) -> None:
    (folder,) = export_skills([guideline_skill()], tmp_path)
    (skill,) = import_skills(folder, status="active", origin="builtin")
    assert (skill.status, skill.origin) == ("active", "builtin")
    assert import_skills(folder)[0].status == "candidate"


def test_import_refuses_a_folder_without_skill_md(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, "alpha", simple("alpha"))
    (folder / "SKILL.md").rename(folder / "skill.md")
    assert problems_of(tmp_path) == [f"{folder}: has no SKILL.md (found skill.md; the file must "
                                     "be called SKILL.md)"]
    assert problems_of(tmp_path / "missing") == [
        f"{tmp_path / 'missing'}: is not a folder; give a skill folder or a folder of skill "
        "folders"]
    (folder / "skill.md").unlink()
    (folder / "SKILL.md").mkdir()
    assert problems_of(tmp_path) == [f"{folder / 'SKILL.md'}: is a folder; SKILL.md must be a "
                                     "file"]
    (folder / "SKILL.md").rmdir()
    assert problems_of(tmp_path) == [f"{tmp_path}: no skill folders (folders holding SKILL.md) "
                                     "found"]


def test_a_duplicate_name_is_skipped_with_a_line_and_the_rest_import(tmp_path: Path) -> None:
    first = write_folder(tmp_path / "team-a", "alpha", simple("alpha"))
    second = write_folder(tmp_path / "team-b", "alpha", simple("alpha", "Another thing."))
    write_folder(tmp_path / "team-b", "beta", simple("beta"))
    report = read_skills(tmp_path)
    assert [s.pattern.name for s in report.skills] == ["alpha", "beta"]
    assert report.skills[0].pattern.description == "Does one thing."
    assert report.skipped == [f"skipped {second}: the name 'alpha' is already taken by {first}"]
    assert not report.refused
    assert problems_of(tmp_path) == report.skipped  # the strict form takes nothing


def test_mixed_directory_imports_nothing_and_lists_every_bad_folder(tmp_path: Path) -> None:
    export_skills([job_skill(), guideline_skill()], tmp_path)
    bad_name = write_folder(tmp_path, "Bad", simple("Bad"))
    no_front = write_folder(tmp_path, "plain", "# plain\n")
    problems = problems_of(tmp_path)
    assert len(problems) == 2
    assert str(bad_name) in problems[0] and str(no_front) in problems[1]
    assert not any("compare-lengths" in p or "read-the-docs" in p for p in problems)


def test_import_skips_hidden_entries_and_files_beside_the_folders(tmp_path: Path) -> None:
    export_skills([guideline_skill()], tmp_path)
    write_folder(tmp_path / ".git", "Bad", simple("Bad"))
    (tmp_path / "README.md").write_text("skills of the team\n")
    assert [s.pattern.name for s in import_skills(tmp_path)] == ["read-the-docs"]
