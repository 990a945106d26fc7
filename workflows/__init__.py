"""Assay's workflows and their contracts; the typed client lives apart, in :mod:`client`.

Everything reachable from a workflow module here is deterministic: no I/O, no settings,
no SDK clients, no sandbox code. ``task`` and ``research`` hold the two workflows of a run,
``library`` the skill library's, ``agents`` calling model roles, ``contracts`` the models
shared with activities, ``common`` the event log, gates and failure texts.
"""
