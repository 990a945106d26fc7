"""A study's activities: closing a cycle from its run's report.

The study workflow (``workflows.study.workflow``) runs each cycle as a research run; when it
ends, ``close_cycle`` (``cycles.py``) reads that run's results JSON and applies the study's
pure rules to it (``workflows.study``: verdicts, go / no-go, what is carried forward).
"""
