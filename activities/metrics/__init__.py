"""Assay's own Prometheus metrics: their definitions, in one registry, and how results feed them.

``definitions`` declares every metric (name, help text, labels, buckets) in
:data:`~activities.metrics.definitions.REGISTRY`, with the names of the model metrics that
the gateway counts through the Temporal SDK's meter (``activities.llm.metrics``); ``record``
turns what activities see (a task's whole result, a run's report, a job's outcome, a skill
match, a memory lookup) into observations. Only activities and workers record: workflow
code stays deterministic. Each worker serves the registry beside the SDK's metrics on its
one metrics port (``workers.pools.exporter``).
"""
