"""Learning off a task's path: a finished task's outcome handed to the long-lived learner.

``handoff.py`` is the orchestration pool's local activity that signals (starting it if need
be) the ``SkillLibraryWorkflow``, which hands the memory part to memory and learns skills from
the rest; ``settle.py`` waits, bounded, until the learner has learned from given tasks (a
study before planning its next cycle, tests and benchmarks between runs).
"""
