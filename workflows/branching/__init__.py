"""Branches, the pure part: which tasks a branch runs, whether a request may start, how lines rank.

A branch re-runs one task from a checkpoint, with modifications, and the tasks downstream of
it, reusing every upstream task's verified artifacts by reference (its modifications are
applied and guarded by ``workflows.common.changes``). ``graph`` finds a branch's tasks and
what it reuses, ``requests`` checks a request against the run and turns it into the
branches' inputs, ``explore`` checks the alternatives a plan writes, and ``compare`` ranks
sibling lines on verified evidence. The workflows that run branches (``BranchWorkflow``, the
run's branches and steering) are in ``workflows.research``. Deterministic, pure code.
"""
