"""Import: every skill folder under a directory, each read and validated in full.

A folder is read in layers, each refusing what the next should not see: its files are listed
and bounded (``scan``), ``SKILL.md`` is split and its front matter loaded and checked
(``frontmatter``), and only then is it read as a folder Assay wrote (``assay``) or one another
tool wrote (``foreign``). Every folder is read before anything is returned, so one bad folder
refuses the whole import with the problems of all of them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

from skills.folders.assay import assay_skill
from skills.folders.errors import Problem, SkillFileError
from skills.folders.foreign import foreign_skill
from skills.folders.frontmatter import header_problems, load_front_matter, split_front_matter
from skills.folders.limits import MAX_SKILL_FILE, PATTERN_KEY, SKILL_FILE
from skills.folders.scan import Source, discover, read_text, scan
from workflows.library.patterns import Skill, SkillStatus


def import_skills(directory: Path, *, status: SkillStatus | None = None,
                  origin: str = "imported") -> list[Skill]:
    """Read every skill folder in ``directory``, or ``directory`` itself if it is one.

    Skill folders may sit up to three levels below ``directory`` (grouped in subfolders);
    hidden entries are skipped. Everything is validated before anything is returned.

    Args:
        directory: one skill folder (holding ``SKILL.md``) or a folder of them.
        status: the status the skills get; ``None``: ``candidate`` (a person approves).
        origin: the skills' origin (``imported``; ``builtin`` for the starting library).

    Returns:
        The skills, in name order.

    Raises:
        SkillFileError: any folder has any problem, names repeat, or no folder was found.
    """
    folders, problems = discover(directory)
    skills: list[Skill] = []
    by_name: dict[str, list[Path]] = {}
    for folder in folders:
        skill, found = _read_folder(folder, status, origin)
        problems += found
        if skill is not None:
            skills.append(skill)
            by_name.setdefault(skill.pattern.name, []).append(folder)
    for name, places in sorted(by_name.items()):
        if len(places) > 1:
            problems.append(f"the name {name!r} is used by {len(places)} folders: "
                            f"{', '.join(str(p) for p in places)}; skill names must be unique")
    if not folders and not problems:
        problems.append(f"{directory}: no skill folders (folders holding {SKILL_FILE}) found")
    if problems:
        raise SkillFileError(problems)
    return sorted(skills, key=lambda s: s.pattern.name)


def _read_folder(folder: Path, status: SkillStatus | None, origin: str
                 ) -> tuple[Skill | None, list[str]]:
    """One folder as a skill, or every problem found in it."""
    try:
        files, problems = scan(folder)
    except OSError as err:
        return None, [f"{folder}: cannot be read ({err.strerror})"]
    where = folder / SKILL_FILE
    if SKILL_FILE not in files:
        if where.is_dir() and not where.is_symlink():
            problems.append(f"{where}: is a folder; {SKILL_FILE} must be a file")
        elif not os.path.lexists(where):
            variants = [n for n in os.listdir(folder) if n.lower() == SKILL_FILE.lower()]
            problems.append(f"{folder}: has no {SKILL_FILE}" + (
                f" (found {variants[0]}; the file must be called {SKILL_FILE})" if variants
                else ""))
        return None, problems or [f"{where}: is not a regular file"]
    try:
        front_text, body = split_front_matter(read_text(where, MAX_SKILL_FILE))
        front = load_front_matter(front_text)
    except Problem as err:
        return None, [*problems, f"{where}: {err}"]
    problems += [f"{where}: {p}" for p in header_problems(front, folder.name)]
    if problems:
        return None, problems
    metadata = cast("dict[str, str]", front.get("metadata") or {})
    reader = assay_skill if PATTERN_KEY in metadata else foreign_skill
    return reader(Source(folder, files, front, body), status, origin)
