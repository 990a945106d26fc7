"""Agent Skills folders: export the library's skills, import skills written by anyone.

A skill folder is named after the skill and holds ``SKILL.md`` (YAML front matter between
``---`` lines, then Markdown) and optionally ``scripts/``, ``references/`` and ``assets/``.
``export`` writes one folder per family with the whole pattern in the front matter's metadata
and the job in ``scripts/`` (``body`` renders the readable Markdown), so an export imports back
to an equal pattern. ``read`` imports folders: ``scan`` finds them and reads their files within
the bounds of ``limits``, ``frontmatter`` parses and checks ``SKILL.md``'s header, then
``assay`` reads a folder Assay wrote and ``foreign`` one written by another tool (a guideline
skill, with a job template when it ships exactly one Python script).

Folders come from outside, so import validates every folder completely before it returns
anything: sizes are bounded before anything is parsed, links and paths leaving the folder are
refused, and every problem found is reported at once (``SkillFileError``). Imported skills are
candidates unless the caller says otherwise: a person approves them before a run applies them.
"""

from skills.folders.errors import SkillFileError
from skills.folders.export import export_skills
from skills.folders.read import import_skills

__all__ = [
    "SkillFileError",
    "export_skills",
    "import_skills",
]
