"""Export of skill folders: the version chosen, the files written, all or nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skills.folders import SkillFileError, export_skills, import_skills
from tests.skills.folders.samples import (
    JOB_SOURCE,
    front_matter,
    guideline_skill,
    job_skill,
    library,
    subagent_skill,
)


def test_round_trip_gives_back_equal_patterns(tmp_path: Path) -> None:
    originals = {s.pattern.name: s for s in [job_skill(2), guideline_skill(), subagent_skill()]}
    export_skills(library(), tmp_path / "out")
    imported = import_skills(tmp_path / "out")
    assert [s.pattern.name for s in imported] == sorted(originals)
    for skill in imported:
        original = originals[skill.pattern.name]
        assert skill.pattern.model_copy(update={"files": []}) == original.pattern
        assert [f.path for f in skill.pattern.files] == (
            [f"scripts/{original.pattern.job.filename}"] if original.pattern.job else [])
        assert skill.metrics == original.metrics
        assert skill.confidence == original.confidence
        assert skill.status == "candidate"
        assert skill.origin == "imported"
        assert str(tmp_path / "out" / skill.pattern.name) in skill.note


def test_export_writes_the_active_version_else_trial_else_newest_candidate(tmp_path: Path
                                                                           ) -> None:
    cases = {
        "a": ([job_skill(1, "retired"), job_skill(2, "active"), job_skill(3, "candidate")], 2),
        "b": ([job_skill(1, "candidate"), job_skill(2, "trial"), job_skill(4, "candidate")], 2),
        "c": ([job_skill(1, "candidate"), job_skill(5, "candidate"), job_skill(6, "retired")], 5),
        "d": ([job_skill(1, "retired"), job_skill(3, "retired")], 3),
    }
    for case, (versions, expected) in cases.items():
        (folder,) = export_skills(versions, tmp_path / case)
        side = json.loads((folder / "assay.json").read_text(encoding="utf-8"))
        assert side["pattern"]["version"] == expected


def test_export_writes_agent_skills_front_matter_and_script(tmp_path: Path) -> None:
    (folder,) = export_skills([job_skill()], tmp_path)
    assert folder == tmp_path / "compare-lengths"
    front = front_matter(folder)
    assert front["name"] == folder.name
    assert front["description"].startswith("Compare | lengths")
    assert "metadata" not in front
    side = json.loads((folder / "assay.json").read_text(encoding="utf-8"))
    assert "source" not in side["pattern"]["job"] and "code" not in side["pattern"]["job"]
    assert side["status"] == "active"
    assert "numpy>=1.26" in front["compatibility"]
    assert (folder / "scripts" / "compare.py").read_bytes() == JOB_SOURCE.encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compare-lengths"]  # no staging left


def test_export_refuses_to_overwrite_and_writes_nothing(tmp_path: Path) -> None:
    existing = tmp_path / "read-the-docs"
    existing.mkdir()
    (existing / "SKILL.md").write_text("mine")
    with pytest.raises(SkillFileError) as caught:
        export_skills([job_skill(), guideline_skill()], tmp_path)
    assert caught.value.problems == [f"{existing}: already exists; export elsewhere or pass "
                                     "overwrite=True"]
    assert (existing / "SKILL.md").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["read-the-docs"]
    export_skills([job_skill(), guideline_skill()], tmp_path, overwrite=True)
    assert front_matter(existing)["name"] == "read-the-docs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compare-lengths", "read-the-docs"]


@pytest.mark.parametrize("filename", ["../x.py", "/etc/passwd", ".hidden.py"])
def test_export_refuses_unsafe_job_file_names(tmp_path: Path, filename: str) -> None:
    skill = job_skill()
    assert skill.pattern.job is not None
    job = skill.pattern.job.model_copy(update={"filename": filename})
    skill = skill.model_copy(update={"pattern": skill.pattern.model_copy(update={"job": job})})
    with pytest.raises(SkillFileError, match="is not a plain file name"):
        export_skills([skill], tmp_path / "out")
    assert not (tmp_path / "out").exists()
