"""The skill library's workflow side: pattern contracts, formulas and SkillLibraryWorkflow."""


from workflows.library.workflow import SkillLibraryWorkflow

__all__ = [
    "SkillLibraryWorkflow",
]
