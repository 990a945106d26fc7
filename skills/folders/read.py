"""Import: every skill folder under a directory, each read and validated in full.

A folder is read in layers, each refusing what the next should not see: its files are listed
and bounded (``scan``), ``SKILL.md`` is split and its front matter loaded and checked
(``frontmatter``), and only then is it read as a folder Assay wrote (``assay``) or one another
tool wrote (``foreign``). Each folder is taken or refused on its own (``read_skills`` says
which and why); ``import_skills`` is the all-or-nothing form.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from skills.folders.assay import assay_skill
from skills.folders.errors import Problem, SkillFileError
from skills.folders.foreign import foreign_skill
from skills.folders.frontmatter import (
    header_problems,
    load_front_matter,
    loose_fields,
    split_front_matter,
)
from skills.folders.limits import MAX_SKILL_FILE, PATTERN_KEY, SKILL_FILE
from skills.folders.scan import Source, discover, read_text, scan
from workflows.library.patterns import Skill, SkillStatus


@dataclass
class ImportReport:
    """What reading a directory of skill folders gave: the skills, and what it refused.

    Attributes:
        skills: the valid skills, in name order.
        refused: folder (or the directory) -> every reason it was refused.
        warnings: what was taken with a conversion (a long description, non-text metadata,
            referenced files listed but not kept), each line naming its folder.
    """

    skills: list[Skill] = field(default_factory=list[Skill])
    refused: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    warnings: list[str] = field(default_factory=list[str])

    @property
    def problems(self) -> list[str]:
        """Every refusal reason, in folder order."""
        return [p for reasons in self.refused.values() for p in reasons]


def read_skills(directory: Path, *, status: SkillStatus | None = None,
                origin: str = "imported") -> ImportReport:
    """Read every skill folder in ``directory`` (or ``directory`` itself if it is one).

    Skill folders may sit up to three levels below ``directory`` (grouped in subfolders);
    hidden entries are skipped. Each folder is validated in full and taken or refused on its
    own; folders sharing a name are all refused.

    Args:
        directory: one skill folder (holding ``SKILL.md``) or a folder of them.
        status: the status the skills get; ``None``: ``candidate`` (a person approves).
        origin: the skills' origin (``imported``; ``builtin`` for the starting library).
    """
    report = ImportReport()
    folders, problems = discover(directory)
    for problem in problems:
        report.refused.setdefault(problem.split(": ", 1)[0], []).append(problem)
    by_name: dict[str, list[tuple[Path, Skill]]] = {}
    for folder in folders:
        skill, found, warnings = _read_folder(folder, status, origin)
        if skill is None:
            report.refused[str(folder)] = found
            continue
        report.warnings += warnings
        by_name.setdefault(skill.pattern.name, []).append((folder, skill))
    for name, places in sorted(by_name.items()):
        if len(places) == 1:
            report.skills.append(places[0][1])
            continue
        where = ", ".join(str(p) for p, _ in places)
        for folder, _ in places:
            report.refused[str(folder)] = [
                f"the name {name!r} is used by {len(places)} folders: {where}; skill names "
                "must be unique"]
    if not folders and not report.refused:
        report.refused[str(directory)] = [
            f"{directory}: no skill folders (folders holding {SKILL_FILE}) found"]
    return report


def import_skills(directory: Path, *, status: SkillStatus | None = None,
                  origin: str = "imported") -> list[Skill]:
    """Every skill folder in ``directory``, all or nothing (:func:`read_skills`, strictly).

    Returns:
        The skills, in name order.

    Raises:
        SkillFileError: any folder has any problem, names repeat, or no folder was found.
    """
    report = read_skills(directory, status=status, origin=origin)
    if report.refused:
        raise SkillFileError(list(dict.fromkeys(report.problems)))
    return report.skills


def _read_folder(folder: Path, status: SkillStatus | None, origin: str
                 ) -> tuple[Skill | None, list[str], list[str]]:
    """One folder as a skill and the warnings, or every problem found in it."""
    try:
        files, problems = scan(folder)
    except OSError as err:
        return None, [f"{folder}: cannot be read ({err.strerror})"], []
    where = folder / SKILL_FILE
    if SKILL_FILE not in files:
        if where.is_dir() and not where.is_symlink():
            problems.append(f"{where}: is a folder; {SKILL_FILE} must be a file")
        elif not os.path.lexists(where):
            variants = [n for n in os.listdir(folder) if n.lower() == SKILL_FILE.lower()]
            problems.append(f"{folder}: has no {SKILL_FILE}" + (
                f" (found {variants[0]}; the file must be called {SKILL_FILE})" if variants
                else ""))
        return None, problems or [f"{where}: is not a regular file"], []
    try:
        front_text, body = split_front_matter(read_text(where, MAX_SKILL_FILE))
        front = load_front_matter(front_text)
    except Problem as err:
        return None, [*problems, f"{where}: {err}"], []
    problems += [f"{where}: {p}" for p in header_problems(front, folder.name)]
    if problems:
        return None, problems, []
    warnings = [f"{where}: {w}" for w in loose_fields(front)]
    source = Source(folder, files, front, body)
    reader = assay_skill if PATTERN_KEY in source.metadata else foreign_skill
    skill, problems = reader(source, status, origin)
    return skill, problems, [*warnings, *source.warnings]
