"""Agent Skills folders: export the library's skills, import skills written by anyone.

A skill folder is named after the skill and holds ``SKILL.md`` (YAML front matter between
``---`` lines, then Markdown) and any other files (``scripts/``, ``references/``, assets,
licences). ``export`` writes one folder per family: ``SKILL.md`` with the spec's fields and the
body once (``body`` renders it, or an imported body is kept as written), Assay's own data in the
side file ``assay.json`` (``side``), the job in ``scripts/``, and every file an import kept.
``read`` imports folders: ``scan`` finds them and reads their files within the bounds of ``limits``,
``frontmatter`` parses and checks ``SKILL.md``'s header, then ``assay`` reads a folder Assay wrote
and ``foreign`` one written by another tool (a guideline skill, with a job only where the side file
declares how to run a script); ``keep`` puts every file in the artifact store by digest and
``flags`` marks text that tries to instruct a model.

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
