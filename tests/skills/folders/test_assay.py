"""Import of folders Assay wrote: the pattern's metadata and job checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from skills.folders import export_skills
from tests.skills.folders.samples import front_matter, job_skill, problems_of


def assay_folder(root: Path, change: dict[str, Any] | None = None,
                 job_change: dict[str, Any] | None = None) -> Path:
    """An exported folder whose assay-pattern JSON is edited as given."""
    (folder,) = export_skills([job_skill()], root)
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    front = front_matter(folder)
    pattern = json.loads(front["metadata"]["assay-pattern"])
    pattern.update(change or {})
    pattern["job"].update(job_change or {})
    front["metadata"]["assay-pattern"] = json.dumps(pattern)
    body = text.split("---\n", 2)[2]
    (folder / "SKILL.md").write_text(f"---\n{yaml.safe_dump(front)}---\n{body}", encoding="utf-8")
    return folder


@pytest.mark.parametrize("filename", ["../x.py", "/etc/passwd", "..", "a/b.py", ".hidden"])
def test_import_refuses_job_file_names_leaving_scripts(tmp_path: Path, filename: str) -> None:
    folder = assay_folder(tmp_path, job_change={"filename": filename})
    assert problems_of(folder) == [
        f"{folder / 'SKILL.md'}: assay-pattern job filename {filename!r} must be a plain file "
        "name under scripts/ (no '/', '..' or leading '.')"]


@pytest.mark.parametrize("entry", ["../../etc/passwd", "/etc/passwd", "jobs//x.py", 5])
def test_import_refuses_job_entries_leaving_the_folder(tmp_path: Path, entry: object) -> None:
    folder = assay_folder(tmp_path, job_change={"entry": entry})
    assert problems_of(folder) == [
        f"{folder / 'SKILL.md'}: assay-pattern job entry {entry!r} must be a relative path "
        "with no '..' parts"]


def test_import_refuses_a_missing_script(tmp_path: Path) -> None:
    folder = assay_folder(tmp_path)
    (folder / "scripts" / "compare.py").unlink()
    assert problems_of(folder) == [f"{folder / 'scripts' / 'compare.py'}: missing; the skill's "
                                   "job runs this script"]


def test_import_refuses_invalid_assay_metadata(tmp_path: Path) -> None:
    folder = assay_folder(tmp_path, {"version": 0, "kind": "robot", "name": "other"})
    problems = problems_of(folder)
    where = folder / "SKILL.md"
    assert f"{where}: assay-pattern names 'other', the front matter 'compare-lengths'; they " \
           "must be equal" in problems
    assert any(p.startswith(f"{where}: metadata assay-pattern, version: ") for p in problems)
    assert any(p.startswith(f"{where}: metadata assay-pattern, kind: ") for p in problems)
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    front = front_matter(folder)
    for key, value, message in (
            ("assay-pattern", "{not json", "metadata assay-pattern is not valid JSON"),
            ("assay-pattern", "[1, 2]", "metadata assay-pattern must be a JSON object"),
            ("assay-pattern", "[" * 10_000 + "]" * 10_000, "assay-pattern is not valid JSON"),
            ("assay-metrics", '{"used": -1}', "metadata assay-metrics, used: "),
            ("assay-confidence", "high", "assay-confidence 'high' must be a number from 0 to 1"),
            ("assay-confidence", "nan", "assay-confidence 'nan' must be a number from 0 to 1"),
            ("assay-version", "9", "metadata assay-version is '9' but assay-pattern says '1'")):
        edited = {**front, "metadata": {**front["metadata"], key: value}}
        if key != "assay-pattern":
            edited["metadata"]["assay-pattern"] = front["metadata"]["assay-pattern"].replace(
                '"other"', '"compare-lengths"').replace('"version": 0', '"version": 1').replace(
                '"robot"', '"skill"')
        body = text.split("---\n", 2)[2]
        (folder / "SKILL.md").write_text(f"---\n{yaml.safe_dump(edited)}---\n{body}")
        problems = problems_of(folder)
        assert len(problems) == 1 and message in problems[0] and str(where) in problems[0], (
            key, value, problems)
