"""Import of a folder another tool wrote: a guideline skill, with a job only where declared.

The Markdown body becomes the guideline (whole, up to ``MAX_GUIDELINE``: a prompt takes a bounded
part of it, see :mod:`skills.guidance`) and its first paragraph the context; its text documents
(``references/`` and Markdown or text files elsewhere) are kept with the pattern to be loaded on
demand, and the scripts Assay keeps but does not run are listed after the body. A description
longer than the index holds is cut at a word for the index and kept whole at the head of the
guideline. The front matter's ``license`` is kept. A script becomes an inline job, whose imports
become preconditions, only when the side file declares how to run it (:mod:`side`); otherwise
it is kept as a file, and the note says so.
"""

from __future__ import annotations

import ast

from pydantic import ValidationError

from skills.folders.errors import Problem
from skills.folders.frontmatter import index_description
from skills.folders.limits import MAX_CONTEXT, SCRIPTS, SIDE_FILE
from skills.folders.scan import Source
from skills.folders.side import declared_job
from workflows.contracts.patterns import (
    MAX_GUIDELINE,
    Preconditions,
    Skill,
    SkillPattern,
    SkillSignature,
    SkillStatus,
)
from workflows.contracts.plan import JobSpec


def foreign_skill(src: Source, status: SkillStatus | None, origin: str, run: object = None
                  ) -> tuple[Skill | None, list[str]]:
    """A folder another tool wrote: a guideline skill, with a job if its side file declares one.

    Args:
        src: the folder.
        status: the status the skill gets (``None``: candidate).
        origin: the skill's origin.
        run: the side file's ``run`` declaration, if any (:func:`declared_job`).
    """
    name, full = str(src.front["name"]), str(src.front["description"]).strip()
    description = index_description(full)
    scripts = sorted(f for f in src.files if f.startswith(f"{SCRIPTS}/"))
    job: JobSpec | None = None
    imports: list[str] = []
    notes = [f"{origin} from {src.folder} (written by another tool)"]
    if run is not None:
        try:
            job, source = declared_job(src, run)
            imports = _imports(src, job.filename or "", source)
        except Problem as err:
            return None, [str(err)]
    unused = [f for f in scripts if job is None or f != f"{SCRIPTS}/{job.filename}"]
    if unused:
        notes.append(f"kept as files, not run: {', '.join(unused[:5])}"
                     + (" …" if len(unused) > 5 else "")
                     + ("" if job else f" (a script runs only when {SIDE_FILE} declares `run`)"))
    references = src.references()
    guideline = _guideline(src.body, full, description != full, sorted(references), unused)
    if len(guideline) > MAX_GUIDELINE:
        return None, [f"{src.where}: the body and file list have {len(guideline)} characters; "
                      f"a guideline holds at most {MAX_GUIDELINE}"]
    try:
        pattern = SkillPattern(
            name=name, description=description, context=_context(full, src.body),
            guideline=guideline, job=job, references=references,
            license=str(src.front.get("license") or ""),
            signature=SkillSignature(keywords=list(dict.fromkeys(name.split("-")))),
            preconditions=Preconditions(imports=imports))
    except ValidationError as err:
        return None, [f"{src.where}: {' '.join(str(err).split())}"]
    return Skill(pattern=pattern, status=status or "candidate", origin=origin,
                 note="; ".join(notes)), []


def _imports(src: Source, filename: str, source: str) -> list[str]:
    """The top-level modules the declared script imports (its preconditions)."""
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
    return [m for m in dict.fromkeys(modules) if m != "__future__"][:64]


def _guideline(body: str, full: str, shortened: bool, references: list[str],
               unused: list[str]) -> str:
    """The Markdown body, with the files Assay keeps but does not run listed after it.

    ``full``: the whole description, kept first when the index took a shortened one.
    """
    parts = [f"Description: {full}" if shortened else "", body.strip() or full]
    if references:
        parts.append("References (read, not run): " + ", ".join(references))
    if unused:
        parts.append("Scripts kept with the skill (not run): " + ", ".join(unused))
    return "\n\n".join(p for p in parts if p)


def _context(description: str, body: str) -> str:
    """The description and the body's first paragraph that is not a heading."""
    paragraphs = [p.strip() for p in body.replace("\r\n", "\n").split("\n\n")]
    first = next((p for p in paragraphs if p and not p.startswith(("#", "```"))), "")
    return f"{description}\n\n{first}".strip()[:MAX_CONTEXT]
