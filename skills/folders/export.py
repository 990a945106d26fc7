"""Export: one Agent Skills folder per skill family, written whole or not at all.

Assay writes its whole pattern into the front matter's ``metadata`` (``assay-pattern``, compact
JSON without the job's source, which lives in ``scripts/``, and without the referenced files,
which live in ``references/``), so an export imports back to an
equal pattern. Every folder is built in memory and checked before the first is written, and
each is written to a staging folder that is then renamed, so a failed export leaves nothing
half-written behind.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from skills.folders.body import render_body
from skills.folders.errors import Problem, SkillFileError
from skills.folders.frontmatter import render_front_matter
from skills.folders.limits import (
    MAX_COMPATIBILITY,
    METRICS_KEY,
    PATTERN_KEY,
    REFERENCES,
    SCRIPTS,
    SKILL_FILE,
    plain_name,
    plain_relative,
    script_name,
)
from workflows.contracts.plan import JobSpec
from workflows.library.patterns import Skill, SkillStatus, name_problem

STATUS_ORDER: tuple[SkillStatus, ...] = ("active", "trial", "candidate", "retired")
"""Which version of a family an export writes: the first status present, newest version."""


def export_skills(skills: Sequence[Skill], directory: Path, *, overwrite: bool = False
                  ) -> list[Path]:
    """Write one Agent Skills folder per skill family (name) into ``directory``.

    The family's active version is written, else its trial, else its newest candidate; a
    family whose versions are all retired exports its newest retired one.

    Args:
        skills: library rows, any number of versions per name.
        directory: where the folders go (created if missing).
        overwrite: replace folders that already exist (each folder is replaced whole).

    Returns:
        The folders written, in name order.

    Raises:
        SkillFileError: a folder exists (without ``overwrite``), a name is invalid or a job
            cannot be written; nothing is written then.
    """
    families: dict[str, list[Skill]] = {}
    for skill in skills:
        families.setdefault(skill.pattern.name, []).append(skill)
    chosen = [_representative(families[name]) for name in sorted(families)]
    problems: list[str] = []
    contents: list[tuple[Path, dict[str, bytes]]] = []
    for skill in chosen:
        target = directory / skill.pattern.name
        try:
            files = _skill_files(skill)
        except Problem as err:
            problems.append(f"{target}: {err}")
            continue
        if os.path.lexists(target) and not overwrite:
            problems.append(f"{target}: already exists; export elsewhere or pass overwrite=True")
        contents.append((target, files))
    if problems:
        raise SkillFileError(problems)
    directory.mkdir(parents=True, exist_ok=True)
    for target, files in contents:
        _write_folder(target, files)
    return [target for target, _ in contents]


def _representative(versions: list[Skill]) -> Skill:
    for status in STATUS_ORDER:
        found = [s for s in versions if s.status == status]
        if found:
            return max(found, key=lambda s: s.pattern.version)
    raise AssertionError("a family has at least one version")  # pragma: no cover


def _skill_files(skill: Skill) -> dict[str, bytes]:
    """The files of ``skill``'s folder: relative path -> content.

    Raises:
        Problem: the name is invalid, or the job has no source or an unsafe file name.
    """
    pattern = skill.pattern
    why = name_problem(pattern.name)
    if why:
        raise Problem(why)
    data = pattern.model_dump(mode="json")
    data.pop("references", None)  # written as files; import reads them back
    files: dict[str, bytes] = {}
    for relative, text in pattern.references.items():
        if not relative.startswith(f"{REFERENCES}/") or not plain_relative(relative):
            raise Problem(f"the referenced file {relative!r} is not a plain path under "
                          f"{REFERENCES}/")
        files[relative] = text.encode()
    compatibility: str | None = None
    if pattern.job is not None:
        filename, source = _job_script(pattern.job)
        job = cast("dict[str, Any]", data["job"])
        job.pop("source", None)
        job.pop("code", None)  # an inline job's code is the script; import restores it
        job["filename"] = filename
        files[f"{SCRIPTS}/{filename}"] = source.encode()
        compatibility = _compatibility(pattern.job, filename)
    metadata = {
        "assay-version": str(pattern.version),
        "assay-kind": pattern.kind,
        "assay-status": skill.status,
        "assay-origin": skill.origin,
        "assay-confidence": repr(skill.confidence),
        PATTERN_KEY: json.dumps(data, separators=(",", ":"), ensure_ascii=False),
        METRICS_KEY: json.dumps(skill.metrics.model_dump(mode="json"), separators=(",", ":")),
    }
    front: dict[str, Any] = {"name": pattern.name, "description": pattern.description}
    if compatibility:
        front["compatibility"] = compatibility
    front["metadata"] = metadata
    files[SKILL_FILE] = f"{render_front_matter(front)}\n{render_body(skill)}".encode()
    return files


def _job_script(job: JobSpec) -> tuple[str, str]:
    source = job.source if job.source is not None else job.code
    if source is None:
        raise Problem(f"the job {job.entry!r} has no source; export skills from the library, "
                      "where jobs hold their code")
    filename = script_name(job)
    if not plain_name(filename):
        raise Problem(f"the job's file name {filename!r} is not a plain file name")
    return filename, source


def _compatibility(job: JobSpec, filename: str) -> str:
    text = f"Python 3; runs {SCRIPTS}/{filename} with its arguments as --name=value"
    if job.requirements:
        text += f"; needs the packages {', '.join(job.requirements)}"
    return text[:MAX_COMPATIBILITY]


def _write_folder(target: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` as the folder ``target``, all or nothing: a staging folder is renamed."""
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for relative, content in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        for folder in (staging, *(p for p in staging.rglob("*") if p.is_dir())):
            folder.chmod(0o755)
        if os.path.lexists(target):
            old = staging.with_name(staging.name + ".old")
            target.rename(old)
            staging.rename(target)
            _remove(old)
        else:
            staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
