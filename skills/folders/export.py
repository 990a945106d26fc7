"""Export: one Agent Skills folder per skill family, written whole or not at all.

``SKILL.md`` holds the spec's fields (name, description, licence, compatibility) and the body
once: rendered from the pattern, or, for a skill imported from another tool, its body as
written (with the optional fields it had). Assay's own data goes to the side file
``assay.json`` (the pattern without the job's source, which lives in ``scripts/``, and without
the referenced files), and every file the import kept comes back from the artifact store byte
for byte, so an export imports back to an equal pattern. Every folder is built in memory and
checked before the first is written, and each is written to a staging folder that is then
renamed, so a failed export leaves nothing half-written behind.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from skills.folders.body import render_body
from skills.folders.errors import Problem, SkillFileError
from skills.folders.frontmatter import (
    load_front_matter,
    render_front_matter,
    split_front_matter,
)
from skills.folders.keep import stored_bytes
from skills.folders.limits import (
    MAX_COMPATIBILITY,
    SCRIPTS,
    SIDE_FILE,
    SKILL_FILE,
    plain_name,
    plain_relative,
    script_name,
)
from skills.folders.side import KEPT_BODY, side_bytes
from workflows.contracts.patterns import Skill, SkillStatus, name_problem
from workflows.contracts.plan import JobSpec

if TYPE_CHECKING:
    from activities.artifacts.store import ArtifactStore

SPEC_FIELDS = ("license", "compatibility", "allowed-tools", "metadata")
"""The optional Agent Skills fields an imported ``SKILL.md`` had, written back on export."""
STATUS_ORDER: tuple[SkillStatus, ...] = ("active", "trial", "candidate", "retired")
"""Which version of a family an export writes: the first status present, newest version."""


def export_skills(skills: Sequence[Skill], directory: Path, *, overwrite: bool = False,
                  store: ArtifactStore | None = None) -> list[Path]:
    """Write one Agent Skills folder per skill family (name) into ``directory``.

    The family's active version is written, else its trial, else its newest candidate; a
    family whose versions are all retired exports its newest retired one.

    Args:
        skills: library rows, any number of versions per name.
        directory: where the folders go (created if missing).
        overwrite: replace folders that already exist (each folder is replaced whole).
        store: the artifact store holding imported skills' files (needed for those only).

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
            files = _skill_files(skill, store)
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


def _skill_files(skill: Skill, store: ArtifactStore | None) -> dict[str, bytes]:
    """The files of ``skill``'s folder: relative path -> content.

    The kept files come back from the store byte for byte; the referenced files and the job's
    script are written from the pattern (the same bytes, unless the skill was revised since).

    Raises:
        Problem: the name is invalid, a kept file is not in the store, or the job has no
            source or an unsafe file name.
    """
    pattern = skill.pattern
    why = name_problem(pattern.name)
    if why:
        raise Problem(why)
    data = pattern.model_dump(mode="json", exclude={
        "name", "description", "license", "references", "files", "flags"})
    original = next((f for f in pattern.files if f.path == SKILL_FILE), None)
    written = {*pattern.references, *([f"{SCRIPTS}/{script_name(pattern.job)}"]
                                      if pattern.job else [])}
    files = stored_bytes([f for f in pattern.files if f.path not in written], store,
                         pattern.skill_id)
    for relative, text in pattern.references.items():
        if not plain_relative(relative) or relative in (SKILL_FILE, SIDE_FILE):
            raise Problem(f"the referenced file {relative!r} is not a plain path in the folder")
        files[relative] = text.encode()
    front: dict[str, Any] = {"name": pattern.name, "description": pattern.description}
    if pattern.license:
        front["license"] = pattern.license
    if pattern.job is not None:
        filename, source = _job_script(pattern.job)
        _trim_job(cast("dict[str, Any]", data["job"]), filename)
        files[f"{SCRIPTS}/{filename}"] = source.encode()
        front["compatibility"] = _compatibility(pattern.job, filename)
    side: dict[str, Any] = {"pattern": data}
    if original is None:
        body = "\n" + render_body(skill)
    else:
        body = _kept_body(files.pop(SKILL_FILE), front)
        side["body"] = KEPT_BODY
    files[SIDE_FILE] = side_bytes(skill, side)
    files[SKILL_FILE] = f"{render_front_matter(front)}{body}".encode()
    return files


def _trim_job(job: dict[str, Any], filename: str) -> None:
    """The job as the side file holds it: its code is the script, which import restores."""
    job.pop("source", None)
    job.pop("code", None)
    job["filename"] = filename


def _kept_body(original: bytes, front: dict[str, Any]) -> str:
    """The body of an imported ``SKILL.md`` as written; its other spec fields join ``front``."""
    try:
        front_text, body = split_front_matter(original.decode("utf-8"))
        written = load_front_matter(front_text)
    except (Problem, UnicodeDecodeError) as err:
        raise Problem(f"the kept {SKILL_FILE} cannot be read again ({err})") from err
    for key in SPEC_FIELDS:
        if key in written and key not in front:
            front[key] = written[key]
    return body


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
