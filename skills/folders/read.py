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
from typing import TYPE_CHECKING

from skills.folders.assay import assay_skill
from skills.folders.errors import Problem, SkillFileError
from skills.folders.foreign import foreign_skill
from skills.folders.frontmatter import (
    header_problems,
    load_front_matter,
    loose_fields,
    split_front_matter,
)
from skills.folders.keep import keep_files, source_flags
from skills.folders.limits import MAX_SKILL_FILE, PATTERN_KEY, SIDE_FILE, SKILL_FILE
from skills.folders.scan import Source, discover, read_text, scan
from skills.folders.side import KEPT_BODY, read_side
from workflows.contracts.patterns import Skill, SkillStatus
from workflows.contracts.words import plural

if TYPE_CHECKING:
    from activities.artifacts.store import ArtifactStore


@dataclass
class ImportReport:
    """What reading a directory of skill folders gave: the skills, and what it refused.

    Attributes:
        skills: the valid skills, in name order.
        refused: folder (or the directory) -> every reason it was refused.
        warnings: what was taken with a conversion (a long description, non-text metadata,
            documents kept as files only) or flagged, each line naming its folder.
        skipped: one line per folder skipped because an earlier folder has its name.
    """

    skills: list[Skill] = field(default_factory=list[Skill])
    refused: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    warnings: list[str] = field(default_factory=list[str])
    skipped: list[str] = field(default_factory=list[str])

    @property
    def problems(self) -> list[str]:
        """Every refusal reason, in folder order."""
        return [p for reasons in self.refused.values() for p in reasons]


def read_skills(directory: Path, *, status: SkillStatus | None = None,
                origin: str = "imported", store: ArtifactStore | None = None) -> ImportReport:
    """Read every skill folder in ``directory`` (or ``directory`` itself if it is one).

    Skill folders may sit up to three levels below ``directory`` (grouped in subfolders);
    hidden entries are skipped. Each folder is validated in full and taken or refused on its
    own; of folders sharing a name the first (in path order) is taken, the others skipped.
    Every file of a taken folder is listed in its pattern (``files``) and, with a store,
    kept there by digest.

    Args:
        directory: one skill folder (holding ``SKILL.md``) or a folder of them.
        status: the status the skills get; ``None``: ``candidate`` (a person approves).
        origin: the skills' origin (``imported``; ``builtin`` for the starting library).
        store: the artifact store the folders' files go to; ``None``: listed, not kept.
    """
    report = ImportReport()
    folders, problems = discover(directory)
    for problem in problems:
        report.refused.setdefault(problem.split(": ", 1)[0], []).append(problem)
    by_name: dict[str, list[tuple[Path, Skill]]] = {}
    for folder in folders:
        skill, found, warnings = _read_folder(folder, status, origin, store)
        if skill is None:
            report.refused[str(folder)] = found
            continue
        report.warnings += warnings
        by_name.setdefault(skill.pattern.name, []).append((folder, skill))
    for name, places in sorted(by_name.items()):
        first = min(places, key=lambda place: str(place[0]))
        report.skills.append(first[1])
        report.skipped += [f"skipped {folder}: the name {name!r} is already taken by "
                           f"{first[0]}" for folder, _ in places if folder != first[0]]
    if not folders and not report.refused:
        report.refused[str(directory)] = [
            f"{directory}: no skill folders (folders holding {SKILL_FILE}) found"]
    return report


def import_skills(directory: Path, *, status: SkillStatus | None = None,
                  origin: str = "imported", store: ArtifactStore | None = None) -> list[Skill]:
    """Every skill folder in ``directory``, all or nothing (:func:`read_skills`, strictly).

    Returns:
        The skills, in name order.

    Raises:
        SkillFileError: any folder has any problem, names repeat, or no folder was found.
    """
    report = read_skills(directory, status=status, origin=origin, store=store)
    if report.refused or report.skipped:
        raise SkillFileError(list(dict.fromkeys([*report.problems, *report.skipped])))
    return report.skills


def _read_folder(folder: Path, status: SkillStatus | None, origin: str,
                 store: ArtifactStore | None) -> tuple[Skill | None, list[str], list[str]]:
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
    try:
        skill, problems = _skill(source, status, origin, store,
                                 body_line=len(front_text.split("\n")) + 3)
    except Problem as err:
        return None, [str(err)], []
    if skill is None:
        return None, problems, []
    flagged = skill.pattern.flags
    if flagged:
        warnings.append(f"{folder}: {plural(len(flagged), 'line')} may try to instruct a model "
                        f"(`assay skills show` lists them): {flagged[0]}")
    return skill, [], [*warnings, *source.warnings]


def _skill(src: Source, status: SkillStatus | None, origin: str, store: ArtifactStore | None,
           *, body_line: int) -> tuple[Skill | None, list[str]]:
    """The folder read by the reader of its kind, whole (:func:`_whole`), or its problems."""
    side = read_side(src)
    assay = (side is not None and "pattern" in side) or PATTERN_KEY in src.metadata
    if assay:
        skill, problems = assay_skill(src, status, origin, side)
    else:
        skill, problems = foreign_skill(src, status, origin, (side or {}).get("run"))
    if skill is None:
        return None, problems
    kept = not assay or (side or {}).get("body") == KEPT_BODY
    return _whole(src, skill, store, kept_body=kept, body_line=body_line), []


def _whole(src: Source, skill: Skill, store: ArtifactStore | None, *, kept_body: bool,
           body_line: int) -> Skill:
    """``skill`` with every file of its folder kept and its flagged lines.

    A foreign folder's ``SKILL.md`` is kept too (export gives its body back as written), and
    so is an Assay folder's that carried such a body; other Assay folders' is regenerated
    from the pattern, and the side file always is.
    """
    skip = frozenset({SIDE_FILE} if kept_body else {SIDE_FILE, SKILL_FILE})
    files = keep_files(src, store, skip)
    pattern = skill.pattern.model_copy(update={"files": files,
                                               "flags": source_flags(src, body_line)})
    return skill.model_copy(update={"pattern": pattern})
