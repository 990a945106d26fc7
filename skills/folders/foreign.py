"""Import of a folder another tool wrote: a guideline skill, with a job for one Python script.

The Markdown body becomes the guideline (whole, up to ``MAX_GUIDELINE``: a prompt takes a bounded
part of it, see :mod:`skills.guidance`) and its first paragraph the context; the text files
under ``references/`` are kept with the pattern to be loaded on demand, and the files Assay keeps
but does not run are listed after the body. A description longer than the index holds is cut
at a word for the index and kept whole at the head of the guideline. A folder with exactly one
Python script under ``scripts/`` gets it as an inline job whose imports become preconditions;
any other scripts leave the skill a guideline only, and the note says why.
"""

from __future__ import annotations

import ast

from pydantic import ValidationError

from skills.folders.errors import Problem
from skills.folders.frontmatter import index_description
from skills.folders.limits import MAX_CONTEXT, REFERENCES, SCRIPTS, plain_name
from skills.folders.scan import Source
from workflows.contracts.plan import JobSpec
from workflows.library.patterns import (
    MAX_GUIDELINE,
    Preconditions,
    Skill,
    SkillPattern,
    SkillSignature,
    SkillStatus,
)


def foreign_skill(src: Source, status: SkillStatus | None, origin: str
                  ) -> tuple[Skill | None, list[str]]:
    """A folder another tool wrote: a guideline skill, with a job if it has one Python script."""
    name, full = str(src.front["name"]), str(src.front["description"]).strip()
    description = index_description(full)
    scripts = sorted(f for f in src.files if f.startswith(f"{SCRIPTS}/"))
    references = sorted(f for f in src.files if f.startswith(f"{REFERENCES}/"))
    job: JobSpec | None = None
    imports: list[str] = []
    notes = [f"{origin} from {src.folder} (written by another tool)"]
    single = scripts[0].removeprefix(f"{SCRIPTS}/") if len(scripts) == 1 else ""
    if single.endswith(".py") and plain_name(single):
        try:
            job, imports = _script_job(src, single)
        except Problem as err:
            return None, [str(err)]
    unused = scripts if job is None else []
    if unused:
        notes.append(f"guideline only: a job template needs exactly one Python script, "
                     f"found {', '.join(unused)}")
    if "license" in src.front:
        notes.append(f"license: {src.front['license']}")
    guideline = _guideline(src.body, full, description != full, references, unused)
    if len(guideline) > MAX_GUIDELINE:
        return None, [f"{src.where}: the body and file list have {len(guideline)} characters; "
                      f"a guideline holds at most {MAX_GUIDELINE}"]
    try:
        pattern = SkillPattern(
            name=name, description=description, context=_context(full, src.body),
            guideline=guideline, job=job, references=src.references(),
            signature=SkillSignature(keywords=list(dict.fromkeys(name.split("-")))),
            preconditions=Preconditions(imports=imports))
    except ValidationError as err:
        return None, [f"{src.where}: {' '.join(str(err).split())}"]
    return Skill(pattern=pattern, status=status or "candidate", origin=origin,
                 note="; ".join(notes)), []


def _script_job(src: Source, filename: str) -> tuple[JobSpec, list[str]]:
    """The one Python script as an inline job, and the top-level modules it imports."""
    source = src.script(filename)
    try:
        tree = ast.parse(source, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        raise Problem(f"{src.folder / SCRIPTS / filename}: is not valid Python "
                      f"({getattr(err, 'msg', err)}, line {getattr(err, 'lineno', '?')})"
                      ) from err
    modules: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            modules += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.append(node.module.split(".")[0])
    imports = [m for m in dict.fromkeys(modules) if m != "__future__"][:64]
    return JobSpec(code=source, source=source, filename=filename), imports


def _guideline(body: str, full: str, shortened: bool, references: list[str],
               unused: list[str]) -> str:
    """The Markdown body, with the files Assay keeps but does not run listed after it.

    ``full``: the whole description, kept first when the index took a shortened one.
    """
    parts = [f"Description: {full}" if shortened else "", body.strip() or full]
    if references:
        parts.append("References (read, not run): " + ", ".join(references))
    if unused:
        parts.append("Scripts of the original skill (not run): " + ", ".join(unused))
    return "\n\n".join(p for p in parts if p)


def _context(description: str, body: str) -> str:
    """The description and the body's first paragraph that is not a heading."""
    paragraphs = [p.strip() for p in body.replace("\r\n", "\n").split("\n\n")]
    first = next((p for p in paragraphs if p and not p.startswith(("#", "```"))), "")
    return f"{description}\n\n{first}".strip()[:MAX_CONTEXT]
