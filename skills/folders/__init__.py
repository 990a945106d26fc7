"""Agent Skills folders: export a skill as ``SKILL.md`` with ``scripts/``, import folders.

Imports are validated strictly (names, front matter, sizes, links, paths leaving the folder).
"""


from skills.folders.files import SkillFileError, export_skills, import_skills

__all__ = [
    "SkillFileError",
    "export_skills",
    "import_skills",
]
