"""Studies, the pure part: hypothesis verdicts, the go / no-go rules, what a cycle carries on.

A study runs cycles (each one run of a plan) toward a goal. ``verdicts`` decides hypotheses
from verified metrics and joins a plan's proposals to the study's tree, ``rules`` decides
after each cycle whether to iterate, pivot, fix or stop (and says why, with the numbers),
and ``carry`` turns a cycle's report into the summary a study keeps and the failed and
deferred tasks it carries forward. The contracts are in ``workflows.contracts.study``; the
study workflow that runs the cycles will live here too. Deterministic, pure code.
"""
