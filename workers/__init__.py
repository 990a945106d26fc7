"""Process entry points: the ``assay`` CLI, worker pools, the embedded stack, settings.

``cli`` is the command line, ``intake`` reads plans, goals and run policies, ``pools``
builds each pool's worker from :mod:`workers.settings`, ``stack`` runs the embedded stack,
``connection`` reaches Temporal (TLS, API key, payload codec), ``evaluation`` is ``assay
eval`` (suites with reference answers, ablations, pass@k).
"""
