"""Branches: a task re-run from a checkpoint with modifications, beside the main line.

A branch is a child workflow of its run (``workflow.BranchWorkflow``) that runs the
branch-point task from its checkpoint and the tasks downstream of it, reusing every upstream
task's verified artifacts by reference. ``changes`` applies and guards a branch's
modifications, ``requests`` checks a request against the run and turns it into branch inputs,
``compare`` ranks sibling lines on verified evidence, ``lines`` is the run's side (start,
follow, compare, select, the ``branches`` tree) and ``steering`` holds pause, resume, cancel
and close. Deterministic workflow code only.
"""
