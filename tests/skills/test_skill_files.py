"""Agent Skills folders: export, import with strict validation, and the built-in library."""

from __future__ import annotations

import json
import math
import os
import random
import statistics
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from skills.builtin import builtin_dir, builtin_skills
from skills.folders.files import (
    MAX_FILES,
    MAX_SKILL_FILE,
    SkillFileError,
    export_skills,
    import_skills,
    read_skill_folder,
)
from workflows.contracts.executive import PatchChange
from workflows.contracts.plan import Check, JobSpec, Resources
from workflows.library.patterns import (
    Preconditions,
    Skill,
    SkillMetrics,
    SkillParameter,
    SkillPattern,
    SkillSignature,
    SkillStatus,
    SkillStep,
)

HANDWRITTEN = Path(__file__).resolve().parents[1] / "data" / "skills" / "handwritten"
JOB_SOURCE = "import sys\n\nprint(sys.argv)\r\n# windows line ending kept\n"


# --- a varied library ------------------------------------------------------------------------


def job_skill(version: int = 1, status: SkillStatus = "active") -> Skill:
    job = JobSpec(entry="jobs/compare.py", source=JOB_SOURCE, filename="compare.py",
                  args={"data": "t.csv", "column": "len", "seed": 7, "alpha": 0.05,
                        "exact": True},
                  expected_artifacts=["comparison.json"], expected_metrics=["p_value"],
                  resources=Resources(memory_mb=256, timeout_s=60), requirements=["numpy>=1.26"])
    pattern = SkillPattern(
        name="compare-lengths", version=version,
        description="Compare | lengths between two groups: 'quoted', ünïcode and: colons",
        context="When a goal asks whether two groups differ.", action="Compare {column}",
        acceptance_criteria=["p_value < 0.05"],
        signature=SkillSignature(keywords=["compare"], input_types=["csv"]),
        preconditions=Preconditions(input_types=["csv"], imports=["numpy"], keywords=["compare"]),
        parameters=[
            SkillParameter(name="data", type="file_path", target="input", default="t.csv",
                           extensions=["csv"]),
            SkillParameter(name="seed", type="integer", default=7, minimum=0, maximum=2**31),
            SkillParameter(name="alpha", type="number", default=0.05, minimum=0.001, maximum=0.5),
            SkillParameter(name="exact", type="boolean", default=True),
            SkillParameter(name="column", type="enum", default="len", options=["len", "wid"]),
        ],
        steps=[SkillStep(agent="planner", phase="plan", detail="chose a permutation test")],
        job=job, checks=[Check(metric="p_value", op="<", value=0.05)],
        contrast="Successes fixed the seed; failures did not.", tags=["stats"],
        source_runs=["run-1", "run-2"])
    metrics = SkillMetrics(retrieved=9, used=4, succeeded=3, total_duration_s=12.5,
                           total_cost_usd=0.25, last_used=datetime(2025, 3, 1, 12, tzinfo=UTC),
                           evidence_successes=2, evidence_failures=1)
    return Skill(pattern=pattern, status=status, metrics=metrics, confidence=0.87,
                 origin="extracted", note="approved")


def guideline_skill() -> Skill:
    pattern = SkillPattern(name="read-the-docs", description="Read the data dictionary first.",
                           guideline="Open the dictionary.\n\nCheck units before any test.")
    return Skill(pattern=pattern, status="candidate", confidence=0.4)


def subagent_skill() -> Skill:
    job = JobSpec(code="print('train')\n", source="print('train')\n", filename="job.py",
                  args={"batch_size": 64})
    pattern = SkillPattern(
        name="train-small-models", kind="subagent", version=3,
        description="A specialist that trains small models and recovers from memory errors.",
        guideline="Halve the batch size on an out-of-memory error.", job=job,
        recovery=[PatchChange(field="args.batch_size", old_value=64, new_value=32,
                              reason="out of memory"),
                  PatchChange(field="resources.timeout_s", old_value=60.0, new_value=120.0)])
    return Skill(pattern=pattern, status="trial", share=0.2, confidence=1.0, origin="merged")


def library() -> list[Skill]:
    return [job_skill(1, "retired"), job_skill(2, "active"), job_skill(3, "candidate"),
            guideline_skill(), subagent_skill()]


def front_matter(folder: Path) -> dict[str, Any]:
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n")[1])


# --- export and round trip -------------------------------------------------------------------


def test_round_trip_gives_back_equal_patterns(tmp_path: Path) -> None:
    originals = {s.pattern.name: s for s in [job_skill(2), guideline_skill(), subagent_skill()]}
    export_skills(library(), tmp_path / "out")
    imported = import_skills(tmp_path / "out")
    assert [s.pattern.name for s in imported] == sorted(originals)
    for skill in imported:
        original = originals[skill.pattern.name]
        assert skill.pattern == original.pattern
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
        assert front_matter(folder)["metadata"]["assay-version"] == str(expected)


def test_export_writes_agent_skills_front_matter_and_script(tmp_path: Path) -> None:
    (folder,) = export_skills([job_skill()], tmp_path)
    assert folder == tmp_path / "compare-lengths"
    front = front_matter(folder)
    assert front["name"] == folder.name
    assert front["description"].startswith("Compare | lengths")
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in front["metadata"].items())
    pattern = json.loads(front["metadata"]["assay-pattern"])
    assert "source" not in pattern["job"] and "code" not in pattern["job"]
    assert front["metadata"]["assay-status"] == "active"
    assert "numpy>=1.26" in front["compatibility"]
    assert (folder / "scripts" / "compare.py").read_bytes() == JOB_SOURCE.encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compare-lengths"]  # no staging left


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


def test_import_takes_the_status_the_caller_gives(tmp_path: Path) -> None:
    (folder,) = export_skills([guideline_skill()], tmp_path)
    skill = read_skill_folder(folder, status="active", origin="builtin")
    assert (skill.status, skill.origin) == ("active", "builtin")
    assert read_skill_folder(folder).status == "candidate"


# --- folders written by other tools ----------------------------------------------------------


def test_import_handwritten_skill_with_one_script_makes_a_job() -> None:
    skill = read_skill_folder(HANDWRITTEN / "tidy-csv")
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
    assert "another tool" in skill.note and "license: Apache-2.0" in skill.note


def test_import_handwritten_skill_with_several_scripts_is_guideline_only() -> None:
    skill = read_skill_folder(HANDWRITTEN / "write-findings")
    assert skill.pattern.job is None
    assert "scripts/figures.py, scripts/render.sh" in skill.note
    assert "Scripts of the original skill (not run): scripts/figures.py" in skill.pattern.guideline
    assert "references/template.md" in skill.pattern.guideline
    assert skill.pattern.context.endswith("Lead with the\nanswer to the question that was asked.")


def test_import_directory_of_handwritten_skills() -> None:
    names = [s.pattern.name for s in import_skills(HANDWRITTEN)]
    assert names == ["tidy-csv", "write-findings"]


# --- hostile input ---------------------------------------------------------------------------


def write_folder(root: Path, folder: str, skill_md: str | bytes,
                 files: dict[str, str | bytes] | None = None) -> Path:
    path = root / folder
    path.mkdir(parents=True)
    data = skill_md.encode() if isinstance(skill_md, str) else skill_md
    (path / "SKILL.md").write_bytes(data)
    for name, content in (files or {}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def simple(name: str, description: str = "Does one thing.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\nBody.\n"


def problems_of(folder: Path) -> list[str]:
    with pytest.raises(SkillFileError) as caught:
        import_skills(folder)
    return caught.value.problems


BAD_FOLDERS: list[tuple[str, str, str | bytes, str]] = [
    ("upper", "Bad-Name", simple("Bad-Name"), "must be lowercase letters, digits and single"),
    ("double", "bad--name", simple("bad--name"), "must be lowercase letters, digits and single"),
    ("long", "a" * 65, simple("a" * 65), "the name has 65 characters (at most 64)"),
    ("mismatch", "alpha", simple("beta"), "`name` is 'beta' but the folder is called 'alpha'"),
    ("no-name", "alpha", "---\ndescription: x\n---\n", "`name` is missing or not text"),
    ("number-name", "alpha", "---\nname: 12\ndescription: x\n---\n", "`name` must be text"),
    ("no-description", "alpha", "---\nname: alpha\n---\n", "`description` is missing, empty"),
    ("long-description", "alpha", simple("alpha", "x" * 1025), "has 1025 characters (at most"),
    ("no-front-matter", "alpha", "# alpha\n\nJust Markdown.\n", "must start with a line '---'"),
    ("not-mapping", "alpha", "---\n- name\n- alpha\n---\n", "must be a YAML mapping"),
    ("scalar", "alpha", "---\njust text\n---\n", "must be a YAML mapping"),
    ("unterminated", "alpha", "---\nname: alpha\ndescription: x\n", "front matter is not closed"),
    ("bad-yaml", "alpha", "---\nname: [alpha\n---\n", "the front matter is not valid YAML"),
    ("python-tag", "alpha", "---\nname: !!python/object/apply:os.system ['true']\n---\n",
     "the front matter is not valid YAML"),
    ("aliases", "alpha", "---\na: &a [x, x, x]\nb: [*a, *a, *a]\nname: alpha\n---\n",
     "anchors or aliases"),
    ("deep", "alpha", "---\nname: " + "[" * 40 + "]" * 40 + "\n---\n", "nested too deeply"),
    ("metadata-list", "alpha", simple("alpha").replace("---\n\n", "metadata: [a]\n---\n\n"),
     "`metadata` must be a mapping"),
    ("metadata-number", "alpha",
     simple("alpha").replace("---\n\n", "metadata:\n  version: 1.2\n---\n\n"),
     "`metadata` values must be text (quote them): version"),
    ("long-compatibility", "alpha",
     simple("alpha").replace("---\n\n", f"compatibility: {'y' * 501}\n---\n\n"),
     "`compatibility` has 501 characters"),
    ("not-utf8", "alpha", b"---\nname: alpha\ndescription: caf\xe9\n---\n",
     "is not UTF-8 text (invalid byte at offset 32)"),
    ("huge", "alpha", simple("alpha") + "x" * MAX_SKILL_FILE, "is larger than 262144 bytes"),
    ("long-body", "alpha", simple("alpha") + "x" * 20_000, "a guideline holds at most 20000"),
]


@pytest.mark.parametrize(("case", "folder", "skill_md", "message"), BAD_FOLDERS,
                         ids=[case[0] for case in BAD_FOLDERS])
def test_import_refuses_bad_skill_md(tmp_path: Path, case: str, folder: str,
                                     skill_md: str | bytes, message: str) -> None:
    path = write_folder(tmp_path, folder, skill_md)
    problems = problems_of(tmp_path)
    assert len(problems) == 1, problems
    assert message in problems[0]
    assert str(path) in problems[0]


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


def test_import_refuses_too_many_files(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"assets/{i:03}.txt": "x" for i in range(MAX_FILES)}
    folder = write_folder(tmp_path, "alpha", simple("alpha"), files)
    assert problems_of(tmp_path) == [f"{folder}: holds 65 files; at most 64 are allowed"]
    for i in range(MAX_FILES, 2 * MAX_FILES):
        (folder / "assets" / f"{i:03}.txt").write_text("x")
    assert "more than 128 files and folders" in problems_of(tmp_path)[0]


def test_import_refuses_big_files_and_folders(tmp_path: Path) -> None:
    big = b"x" * (1024 * 1024 + 1)
    folder = write_folder(tmp_path, "alpha", simple("alpha"), {"assets/big.bin": big})
    assert problems_of(tmp_path) == [f"{folder / 'assets' / 'big.bin'}: 1048577 bytes; each "
                                     "file may hold at most 1048576 bytes"]
    (folder / "assets" / "big.bin").unlink()
    for i in range(5):
        (folder / "assets" / f"{i}.bin").write_bytes(b"x" * 900_000)
    assert problems_of(tmp_path) == [f"{folder}: holds {4_500_000 + len(simple('alpha'))} bytes;"
                                     " at most 4194304"]


def test_import_refuses_symbolic_links(tmp_path: Path) -> None:
    outside = tmp_path / "secret.py"
    outside.write_text("print('secret')\n")
    root = tmp_path / "skills"
    folder = write_folder(root, "alpha", simple("alpha"))
    (folder / "scripts").mkdir()
    (folder / "scripts" / "run.py").symlink_to(outside)
    assert problems_of(root) == [f"{folder / 'scripts' / 'run.py'}: is a symbolic link; links "
                                 "are refused, copy the file"]
    (folder / "scripts" / "run.py").unlink()
    (root / "linked").symlink_to(folder)
    assert problems_of(root) == [f"{root / 'linked'}: is a symbolic link; copy the folder in "
                                 "instead"]
    with pytest.raises(SkillFileError, match="is a symbolic link"):
        read_skill_folder(root / "linked")


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


def test_import_refuses_duplicate_names(tmp_path: Path) -> None:
    first = write_folder(tmp_path / "team-a", "alpha", simple("alpha"))
    second = write_folder(tmp_path / "team-b", "alpha", simple("alpha"))
    assert problems_of(tmp_path) == [f"the name 'alpha' is used by 2 folders: {first}, {second};"
                                     " skill names must be unique"]


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


def test_foreign_script_that_is_not_python_is_refused(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, "alpha", simple("alpha"), {"scripts/run.py": "def (:\n"})
    assert problems_of(tmp_path) == [f"{folder / 'scripts' / 'run.py'}: is not valid Python "
                                     "(invalid syntax, line 1)"]
    (folder / "scripts" / "run.py").write_bytes(b"print('\xff')\n")
    assert "is not UTF-8 text" in problems_of(tmp_path)[0]


# --- the built-in library --------------------------------------------------------------------


BUILTINS = ["compare-two-groups", "correlation-matrix", "describe-column", "find-outliers",
            "linear-regression", "profile-table"]


def test_builtins_load_as_active_validated_skills() -> None:
    skills = builtin_skills()
    assert [s.pattern.name for s in skills] == BUILTINS
    for skill in skills:
        pattern, job = skill.pattern, skill.pattern.job
        assert (skill.status, skill.origin, skill.confidence) == ("active", "builtin", 1.0)
        assert job is not None and job.source and job.filename
        assert job.source == (builtin_dir() / pattern.name / "scripts" / job.filename).read_text()
        assert pattern.checks and pattern.parameters and job.expected_artifacts
        assert pattern.preconditions.input_types == ["csv"]
        assert set(job.args) == {p.name for p in pattern.parameters}
        assert all(p.problem(p.default) is None for p in pattern.parameters
                   if p.default is not None)
        assert all(p.name in job.args for p in pattern.parameters)
        assert set(pattern.preconditions.imports) <= set(sys.stdlib_module_names)


def test_builtin_folders_are_what_export_writes(tmp_path: Path) -> None:
    for folder in export_skills(builtin_skills(), tmp_path):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            shipped = builtin_dir() / folder.name / path.relative_to(folder)
            assert shipped.read_bytes() == path.read_bytes(), shipped


def run_builtin(name: str, cwd: Path, **args: object) -> dict[str, Any]:
    """Run a built-in's script the way the sandbox does and return its metrics."""
    skill = next(s for s in builtin_skills() if s.pattern.name == name)
    job = skill.pattern.job
    assert job is not None and job.filename is not None
    merged = {**job.args, **args}
    flags = [f"--{k}={json.dumps(v) if isinstance(v, bool) else v}" for k, v in merged.items()]
    script = builtin_dir() / name / "scripts" / job.filename
    done = subprocess.run([sys.executable, str(script), *flags], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    metrics: dict[str, Any] = json.loads((cwd / "metrics.json").read_text())
    assert set(job.expected_metrics) <= set(metrics)
    for artifact in job.expected_artifacts:
        assert json.loads((cwd / artifact).read_text())
    for check in skill.pattern.checks:
        assert check.holds(metrics[check.metric]), check.describe()
    return metrics


def write_csv(path: Path, header: list[str], rows: Sequence[Sequence[object]]) -> None:
    lines = [",".join(header), *(",".join(str(c) for c in row) for row in rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_builtin_profile_table(tmp_path: Path) -> None:
    write_csv(tmp_path / "data.csv", ["id", "size", "colour"],
              [[1, 2.5, "red"], [2, "NA", "blue"], [3, 4.0, ""], [3, 4.0, ""], [4, 1.0, "red"]])
    metrics = run_builtin("profile-table", tmp_path)
    assert metrics == {"rows": 5, "columns": 3, "missing_values": 3, "complete_rows": 2,
                       "duplicate_rows": 1, "numeric_columns": 2, "text_columns": 1}
    profile = json.loads((tmp_path / "profile.json").read_text())
    assert profile["column_summaries"]["size"]["median"] == 3.25
    assert profile["column_summaries"]["colour"]["top"][0] == {"value": "red", "count": 2}


def test_builtin_describe_column(tmp_path: Path) -> None:
    write_csv(tmp_path / "data.csv", ["value"], [[v] for v in [*range(1, 10), "NA"]])
    metrics = run_builtin("describe-column", tmp_path)
    assert (metrics["n"], metrics["missing"], metrics["mean"], metrics["median"]) == (9, 1, 5, 5)
    assert (metrics["q1"], metrics["q3"], metrics["skewness"]) == (3, 7, 0)
    assert metrics["sd"] == round(statistics.stdev(range(1, 10)), 6)


def test_builtin_compare_two_groups(tmp_path: Path) -> None:
    rng = random.Random(3)
    rows = [[g, round(rng.gauss(mean, 1.0), 4)] for g, mean in (("a", 0.0), ("b", 0.1))
            for _ in range(2000)]
    write_csv(tmp_path / "data.csv", ["group", "value"], rows)
    metrics = run_builtin("compare-two-groups", tmp_path, permutations=200)
    assert (metrics["n_a"], metrics["n_b"]) == (2000, 2000)
    normal_p = math.erfc(abs(metrics["t_statistic"]) / math.sqrt(2))  # df ~ 4000: t ~ normal
    assert metrics["welch_p_value"] == pytest.approx(normal_p, rel=0.01)
    again = run_builtin("compare-two-groups", tmp_path, permutations=200)
    assert again["p_value"] == metrics["p_value"]  # seeded
    write_csv(tmp_path / "data.csv", ["group", "value"],
              [["x", v] for v in range(10)] + [["y", v + 20] for v in range(10)])
    separated = run_builtin("compare-two-groups", tmp_path, permutations=999)
    assert separated["p_value"] == 1 / 1000
    assert separated["welch_p_value"] < 1e-10 and separated["mean_difference"] == -20


def test_builtin_linear_regression(tmp_path: Path) -> None:
    xs = [float(x) for x in range(1, 21)]
    ys = [2.0 * x + 1.0 + (0.5 if x % 2 else -0.5) * (x % 3) for x in xs]
    write_csv(tmp_path / "data.csv", ["x", "y"], [*zip(xs, ys, strict=True), ["", 3]])
    metrics = run_builtin("linear-regression", tmp_path)
    expected = statistics.linear_regression(xs, ys)
    assert metrics["slope"] == pytest.approx(expected.slope, abs=1e-6)
    assert metrics["intercept"] == pytest.approx(expected.intercept, abs=1e-6)
    assert metrics["r_squared"] == pytest.approx(statistics.correlation(xs, ys) ** 2, abs=1e-6)
    assert (metrics["n"], metrics["dropped_rows"]) == (20, 1)
    finding = json.loads((tmp_path / "regression.json").read_text())
    low, high = finding["slope_ci95"]
    assert low < expected.slope < high


def test_builtin_correlation_matrix(tmp_path: Path) -> None:
    xs = list(range(1, 11))
    write_csv(tmp_path / "data.csv", ["x", "cube", "neg", "const"],
              [[x, x**3, -x, 1] for x in xs])
    pearson = run_builtin("correlation-matrix", tmp_path)
    assert (pearson["columns"], pearson["pairs"], pearson["rows_used"]) == (3, 3, 10)
    assert pearson["max_abs_r"] == 1.0 and pearson["strongest_pair"] == "x~neg"
    run_builtin("correlation-matrix", tmp_path, method="spearman")
    matrix = json.loads((tmp_path / "correlations.json").read_text())["matrix"]
    assert matrix["x"]["cube"] == 1.0 and matrix["cube"]["neg"] == -1.0


def test_builtin_find_outliers(tmp_path: Path) -> None:
    write_csv(tmp_path / "data.csv", ["value"], [[v] for v in [*range(1, 11), 100, "NA"]])
    metrics = run_builtin("find-outliers", tmp_path)
    assert (metrics["n"], metrics["missing"], metrics["outliers"]) == (11, 1, 1)
    listed = json.loads((tmp_path / "outliers.json").read_text())["listed"]
    assert listed == [{"line": 12, "value": 100.0, "side": "high"}]


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_scripts_explain_bad_input(tmp_path: Path, name: str) -> None:
    skill = next(s for s in builtin_skills() if s.pattern.name == name)
    assert skill.pattern.job is not None and skill.pattern.job.filename is not None
    script = builtin_dir() / name / "scripts" / skill.pattern.job.filename
    done = subprocess.run([sys.executable, str(script), "--data=absent.csv"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert "input 'absent.csv' not found" in done.stderr
    assert not os.path.exists(tmp_path / "metrics.json")
