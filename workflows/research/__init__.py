"""ResearchWorkflow: one research goal or plan through intake, planning, tasks and report.

``workflow`` holds the workflow class with its handlers and pipeline; its steps are plain
collaborators given the run's ``state.RunState``: ``planning`` plans a goal (a person or the
planner) and holds the plan gate, ``tasks`` runs the plan's tasks as child workflows,
``memory`` and ``skills`` consult the learning pools, ``lines`` runs the run's branches
(``branch`` is a branch's workflow, ``choosing`` keeps a line of each group), ``steering``
pauses, resumes, cancels and closes it, ``report`` ends the run. Imported from
their modules: they call activities through :mod:`workflows.catalogue`.
"""
