"""Import of folders Assay wrote: the side file's pattern and job checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from skills.folders import export_skills, import_skills
from tests.skills.folders.samples import front_matter, job_skill, problems_of


def assay_folder(root: Path, change: dict[str, Any] | None = None,
                 job_change: dict[str, Any] | None = None) -> Path:
    """An exported folder whose side file's pattern is edited as given."""
    (folder,) = export_skills([job_skill()], root)
    side = json.loads((folder / "assay.json").read_text(encoding="utf-8"))
    side["pattern"].update(change or {})
    side["pattern"]["job"].update(job_change or {})
    (folder / "assay.json").write_text(json.dumps(side), encoding="utf-8")
    return folder


@pytest.mark.parametrize("filename", ["../x.py", "/etc/passwd", "..", "a/b.py", ".hidden"])
def test_import_refuses_job_file_names_leaving_scripts(tmp_path: Path, filename: str) -> None:
    folder = assay_folder(tmp_path, job_change={"filename": filename})
    assert problems_of(folder) == [
        f"{folder / 'SKILL.md'}: the pattern's job filename {filename!r} must be a plain file "
        "name under scripts/ (no '/', '..' or leading '.')"]


@pytest.mark.parametrize("entry", ["../../etc/passwd", "/etc/passwd", "jobs//x.py", 5])
def test_import_refuses_job_entries_leaving_the_folder(tmp_path: Path, entry: object) -> None:
    folder = assay_folder(tmp_path, job_change={"entry": entry})
    assert problems_of(folder) == [
        f"{folder / 'SKILL.md'}: the pattern's job entry {entry!r} must be a relative path "
        "with no '..' parts"]


def test_import_refuses_a_missing_script(tmp_path: Path) -> None:
    folder = assay_folder(tmp_path)
    (folder / "scripts" / "compare.py").unlink()
    assert problems_of(folder) == [f"{folder / 'scripts' / 'compare.py'}: missing; the skill's "
                                   "job runs this script"]


def test_import_refuses_an_invalid_side_file(tmp_path: Path) -> None:
    folder = assay_folder(tmp_path, {"version": 0, "kind": "robot", "name": "other"})
    problems = problems_of(folder)
    where = folder / "SKILL.md"
    assert f"{where}: the pattern names 'other', the front matter 'compare-lengths'; they " \
           "must be equal" in problems
    assert any(p.startswith(f"{where}: pattern, version: ") for p in problems)
    assert any(p.startswith(f"{where}: pattern, kind: ") for p in problems)
    side = folder / "assay.json"
    good = json.loads(side.read_text(encoding="utf-8"))
    good["pattern"].update(version=1, kind="skill", name="compare-lengths")
    for key, value, message in (
            ("pattern", [1, 2], "assay.json: `pattern` must be a JSON object"),
            ("metrics", {"used": -1}, "SKILL.md: metrics, used: "),
            ("confidence", "high", "the confidence 'high' must be a number from 0 to 1"),
            ("confidence", "nan", "the confidence 'nan' must be a number from 0 to 1"),
            ("format", 2, "assay.json: format 2 is newer than this version of Assay reads")):
        side.write_text(json.dumps({**good, key: value}), encoding="utf-8")
        problems = problems_of(folder)
        assert len(problems) == 1 and message in problems[0], (key, value, problems)
    for text, message in (("{not json", "assay.json: is not valid JSON"),
                          ("[" * 10_000 + "]" * 10_000, "assay.json: is not valid JSON"),
                          ("[1]", "assay.json: must hold a JSON object")):
        side.write_text(text, encoding="utf-8")
        problems = problems_of(folder)
        assert len(problems) == 1 and message in problems[0], (text, problems)


def test_a_folder_of_the_earlier_format_still_imports(tmp_path: Path) -> None:
    """Earlier exports held the pattern in the front matter's metadata; they read the same."""
    (folder,) = export_skills([job_skill()], tmp_path)
    (expected,) = import_skills(folder)
    side = json.loads((folder / "assay.json").read_text(encoding="utf-8"))
    (folder / "assay.json").unlink()
    front = front_matter(folder)
    front["metadata"] = {"assay-pattern": json.dumps(side["pattern"]),
                         "assay-metrics": json.dumps(side["metrics"]),
                         "assay-confidence": str(side["confidence"]), "assay-version": "9"}
    body = (folder / "SKILL.md").read_text(encoding="utf-8").split("---\n", 2)[2]
    (folder / "SKILL.md").write_text(f"---\n{yaml.safe_dump(front)}---\n{body}")
    assert problems_of(folder) == [f"{folder / 'SKILL.md'}: metadata assay-version is '9' but "
                                   "assay-pattern says '1'"]
    front["metadata"]["assay-version"] = "1"
    (folder / "SKILL.md").write_text(f"---\n{yaml.safe_dump(front)}---\n{body}")
    (again,) = import_skills(folder)
    assert again.pattern == expected.pattern and again.metrics == expected.metrics
