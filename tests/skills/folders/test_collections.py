"""Folders shaped like public Agent Skills collections: valid ones import, refusals say why.

The collections that motivated this (an official example set and a scientific one) ship long
bodies, ``references/`` folders of many files, descriptions longer than the index holds and
metadata that is not text; each of those must import, and a few truly broken folders mixed in
are refused one by one, with their reasons, while ``import_skills`` (strict) takes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from activities.artifacts.store import LocalArtifactStore
from skills.folders import SkillFileError, export_skills, import_skills
from skills.folders.read import ImportReport, read_skills
from skills.guidance import PROMPT_GUIDELINE_CHARS, load_reference, prompt_guideline
from tests.skills.folders.samples import simple, write_folder
from workflows.contracts.patterns import MAX_DESCRIPTION

COUNT = 150
BROKEN = {"broken-0": "must start with a line '---'", "broken-1": "is a symbolic link",
          "broken-2": "but the folder is called", "broken-3": "is not valid Python"}


def _body(n: int) -> str:
    section = (f"## Step {n}\n\nRead the table, check the units of every column, then fit the "
               "model and report the estimate with its interval.\n\n")
    return "# Guide\n\n" + section * (25_000 // len(section) + n % 3)


def write_collection(root: Path) -> None:
    """``COUNT`` folders like the public collections, and the broken ones of ``BROKEN``."""
    for n in range(COUNT):
        name = f"science-skill-{n}"
        description = ("Analyse data " + "with care and report intervals " * 40
                       if n % 5 == 0 else f"Analyse data set {n} and report intervals.")
        front = (f"---\nname: {name}\ndescription: {description}\nlicense: MIT\n"
                 "metadata:\n  tags: [stats, biology]\n  version: 1.2\n"
                 "  authors: {lead: ada}\n---\n\n")
        files: dict[str, str | bytes] = {
            f"references/api/part-{i:03}.md": f"# Part {i}\n\n" + "detail " * 400
            for i in range(80 if n % 3 == 0 else 5)}
        files["references/nested/deeper/notes.md"] = "Nested notes.\n"
        files["assets/logo.png"] = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
        files["scripts/run.sh"] = "echo run\n"
        files["scripts/helper.py"] = "print('helper')\n"
        write_folder(root, name, front + _body(n), files)
    write_folder(root, "broken-0", "# no front matter\n")
    link = write_folder(root, "broken-1", simple("broken-1"))
    (link / "scripts").mkdir()
    (link / "scripts" / "run.py").symlink_to(root / "broken-0" / "SKILL.md")
    write_folder(root, "broken-2", simple("another-name"))
    write_folder(root, "broken-3", simple("broken-3"), {
        "scripts/run.py": "def (:\n", "assay.json": '{"run": {"script": "scripts/run.py"}}'})


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated collection, written once: the tests here only read it."""
    root = tmp_path_factory.mktemp("collection")
    write_collection(root)
    return root


@pytest.fixture(scope="module")
def report(collection: Path) -> ImportReport:
    """The collection as ``read_skills`` reads it (its time: benchmarks/bench_guards.py)."""
    return read_skills(collection)


def test_a_collection_imports_every_valid_folder_and_lists_each_refusal(
        report: ImportReport) -> None:
    assert [s.pattern.name for s in report.skills] == sorted(
        f"science-skill-{n}" for n in range(COUNT))
    assert sorted(Path(f).name for f in report.refused) == sorted(BROKEN)
    for folder, reasons in report.refused.items():
        assert len(reasons) == 1 and BROKEN[Path(folder).name] in reasons[0], reasons


def test_long_bodies_references_descriptions_and_metadata_are_kept(report: ImportReport) -> None:
    skill = next(s for s in report.skills if s.pattern.name == "science-skill-0")
    pattern = skill.pattern
    full = ("Analyse data " + "with care and report intervals " * 40).strip()
    assert len(full) > MAX_DESCRIPTION >= len(pattern.description)
    assert pattern.description.endswith("…") and full.startswith(pattern.description[:-1])
    assert pattern.guideline.startswith(f"Description: {full}\n\n# Guide")
    assert _body(0).strip() in pattern.guideline and len(pattern.guideline) > 20_000
    assert len(pattern.references) == 81
    assert pattern.references["references/nested/deeper/notes.md"] == "Nested notes.\n"
    assert pattern.job is None  # no run declared: a guideline only, nothing is run
    warned = [w for w in report.warnings if "science-skill-0/" in w]
    assert any("`description` has" in w for w in warned)
    assert any("metadata` values that are not text were kept as JSON text: tags, version, "
               "authors" in w for w in warned)
    prompt = prompt_guideline(pattern)
    assert len(prompt) <= PROMPT_GUIDELINE_CHARS
    assert "more characters of the guideline" in prompt
    assert "references/api/part-000.md" in prompt and " more" in prompt.rsplit("\n", 1)[-1]
    assert len(prompt_guideline(pattern, 1000)) <= 1000  # many files still fit the budget
    loaded = load_reference(pattern, "references/api/part-001.md", 500)
    assert loaded.startswith("# Part 1") and "more characters of references/api" in loaded
    with pytest.raises(KeyError, match="keeps no referenced file"):
        load_reference(pattern, "references/missing.md")


def test_strict_import_takes_nothing_from_a_collection_with_a_broken_folder(
        collection: Path) -> None:
    with pytest.raises(SkillFileError) as caught:
        import_skills(collection)
    assert len(caught.value.problems) == len(BROKEN)


def test_an_imported_collection_skill_exports_and_imports_back_equal(
        collection: Path, tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    (skill,) = import_skills(collection / "science-skill-0", store=store)
    (folder,) = export_skills([skill], tmp_path / "out", store=store)
    (again,) = import_skills(folder, store=store)
    regenerated = {"files": [f for f in skill.pattern.files if f.path != "SKILL.md"]}
    assert again.pattern.model_copy(update={
        "files": [f for f in again.pattern.files if f.path != "SKILL.md"]}
    ) == skill.pattern.model_copy(update=regenerated)
    assert json.loads(json.dumps(again.pattern.references)) == skill.pattern.references


def test_past_the_ceilings_a_folder_is_refused_with_the_reason(tmp_path: Path) -> None:
    from skills.folders.limits import MAX_FILES

    files: dict[str, str | bytes] = {f"references/{i:04}.md": "x" for i in range(MAX_FILES)}
    write_folder(tmp_path, "too-many", simple("too-many"), files)
    write_folder(tmp_path, "fine", simple("fine"))
    report = read_skills(tmp_path)
    assert [s.pattern.name for s in report.skills] == ["fine"]
    (reasons,) = report.refused.values()
    assert reasons == [f"{tmp_path / 'too-many'}: holds {MAX_FILES + 1} files; at most "
                       f"{MAX_FILES} are allowed"]
