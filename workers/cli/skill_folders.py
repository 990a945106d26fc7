"""``assay skills export``, ``import`` and ``reference``: skills as Agent Skills folders.

Export writes the library's skills as folders; import reads folders anyone wrote, takes the
valid ones as candidates, with every file of each kept in the artifact store, and lists each
refused or skipped folder (``--strict``: all or nothing); ``reference`` prints a guideline,
or one of its referenced files, as an agent gets it (within a character budget). Registered
on ``skills_app`` by :mod:`workers.cli.skills`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from workers.cli.common import EXIT_BAD_INPUT, ByOption, fail
from workers.cli.skills import IN_USE, STATUSES, IdArgument, skills_app, with_store
from workers.settings import Settings
from workflows.contracts.words import plural

if TYPE_CHECKING:
    from skills.store import SkillStore
    from workflows.contracts.patterns import Skill


@skills_app.command("export")
def export(
    directory: Annotated[Path, typer.Argument(help="The folder to write skill folders to.")],
    overwrite: Annotated[bool, typer.Option(help="Replace skill folders already "
                                            "there.")] = False,
    show_all: Annotated[bool, typer.Option("--all", help="Also export retired skills.")]
    = False,
) -> None:
    """Write skills as Agent Skills folders (SKILL.md, assay.json, every file kept)."""
    from skills.folders import SkillFileError, export_skills

    if directory.exists() and not directory.is_dir():
        fail(f"{directory} is not a directory", EXIT_BAD_INPUT)
    found, warnings = with_store(lambda store: store.scan(STATUSES if show_all else IN_USE))
    for warning in warnings:
        typer.echo(f"warning: {warning}", err=True)
    if not found:
        fail("nothing to export: the library has no skills" +
             ("" if show_all else " that are not retired (--all exports those too)"))
    try:
        paths = export_skills(found, directory, overwrite=overwrite,
                              store=Settings().artifact_store())
    except SkillFileError as err:
        fail("nothing exported: " + "; ".join(err.problems or [str(err)]), EXIT_BAD_INPUT)
    except FileExistsError as err:
        fail(f"{err.filename or directory} already exists: give --overwrite to replace it",
             EXIT_BAD_INPUT)
    except OSError as err:
        fail(f"cannot write to {directory}: {err.strerror or err}")
    typer.echo(f"exported {plural(len(paths), 'skill')} to {directory}")
    for path in paths:
        typer.echo(f"  {path}")


@skills_app.command("import")
def import_(
    directory: Annotated[Path, typer.Argument(help="A folder of skill folders.")],
    by: ByOption = None,
    strict: Annotated[bool, typer.Option(
        "--strict", help="Import nothing if any folder is refused.")] = False,
) -> None:
    """Add the valid skills of a folder as candidates and list each folder refused, and why.

    Every file of a folder is kept in the artifact store and exported back with the skill.
    A folder whose name an earlier folder took, or a skill id already in the library, is
    skipped with a line saying so. Exit 0 when the folders were read (refusals, skips and
    warnings are listed); exit 2 when nothing could be imported, or with --strict when any
    folder is refused (then nothing is imported).
    """
    from skills.folders.read import read_skills

    if not directory.is_dir():
        fail(f"{directory} is not a directory of skills", EXIT_BAD_INPUT)
    settings = Settings()
    report = read_skills(directory, store=settings.artifact_store())
    if list(report.refused) == [str(directory)] and not report.skills:
        fail("nothing imported: " + "; ".join(report.refused[str(directory)]), EXIT_BAD_INPUT)
    for warning in report.warnings:
        typer.echo(f"warning: {warning}", err=True)
    refusals = [f"refused {folder}: " + "; ".join(reasons)
                for folder, reasons in report.refused.items()]
    if report.refused and (strict or not report.skills):
        for line in refusals:
            typer.echo(line, err=True)
        fail(f"nothing imported: {plural(len(report.refused), 'folder')} refused"
             + (" (--strict)" if strict and report.skills else ""), EXIT_BAD_INPUT)
    who = by or settings.user
    candidates = [s.model_copy(update={"status": "candidate", "origin": "imported",
                                       "share": 0.0, "note": _note(s, directory.name, who)})
                  for s in report.skills]
    added, taken = with_store(lambda store: _add_new(store, candidates, who))
    for line in [*report.skipped, *(f"skipped {i}: already in the library" for i in taken)]:
        typer.echo(line)
    typer.echo(f"imported {plural(len(added), 'skill')} as candidates"
               + (": " + ", ".join(s.skill_id for s in added) if added else ""))
    for line in refusals:
        typer.echo(line)
    if refusals:
        typer.echo(f"{plural(len(refusals), 'folder')} refused (listed above)")
    typer.echo("approve one with `assay skills approve ID`")


def _note(skill: Skill, directory: str, who: str) -> str:
    """Who imported ``skill`` from where, then what the reader noted after its first part."""
    _, _, rest = skill.note.partition("; ")
    return f"imported from {directory} by {who}" + (f"; {rest}" if rest else "")


async def _add_new(store: SkillStore, skills: list[Skill], who: str
                   ) -> tuple[list[Skill], list[str]]:
    """Add the skills whose id the library does not hold yet: those added, and the ids taken."""
    from skills.store import SkillExists

    taken: list[str] = []
    while True:
        fresh = [s for s in skills if s.skill_id not in taken]
        if not fresh:
            return [], taken
        try:
            return await store.add_many(fresh, by=who, action="imported"), taken
        except SkillExists as err:
            if not set(err.skill_ids) - set(taken):
                raise
            taken += [i for i in err.skill_ids if i not in taken]


@skills_app.command("reference")
def reference(
    skill_id: IdArgument,
    path: Annotated[str | None, typer.Argument(
        help="The referenced file, e.g. references/api.md; none: the guideline as a prompt "
        "takes it.")] = None,
    budget: Annotated[int, typer.Option(min=200, max=200_000, help="At most this many "
                                        "characters.")] = 16_000,
) -> None:
    """Print a skill's guideline or one of its referenced files, bounded as an agent gets it."""
    from skills.guidance import load_reference, prompt_guideline

    skill = with_store(lambda store: store.get(skill_id))
    try:
        text = (prompt_guideline(skill.pattern, budget) if path is None
                else load_reference(skill.pattern, path, budget))
    except KeyError as err:
        fail(str(err.args[0]), EXIT_BAD_INPUT)
    typer.echo(text)
