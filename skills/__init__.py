"""The skill library: patterns extracted from finished tasks, retrieved and applied.

``library.SkillLibrary`` holds the skills pool's activities (match, record outcomes,
extract, maintain) over ``store`` (PostgreSQL rows and audit trail, ``schema``) and
``index`` (dense and sparse vectors fused by RRF, through :mod:`activities.vectors`: an
in-process shard or a Qdrant server). ``extract`` turns batches of
outcomes into patterns, ``maintain`` prunes and merges, ``choosing`` picks the skill a match
applies, ``apply`` fills a pattern's parameters for a goal, ``folders`` imports and exports
Agent Skills folders, ``builtin`` loads the skills shipped in ``data/``; ``writing`` shows
patterns to the skill writer and puts its text on them, ``revise.SkillRevisions`` is its
``revise_skills``; ``guidelines`` offers guideline skills at a match and counts their uses,
``guidance`` bounds their text for a prompt. The workflow side (pattern contracts, formulas,
``SkillLibraryWorkflow``) lives in :mod:`workflows.library`.
"""
