"""Process entry points: the ``assay`` CLI, worker pools, settings and the embedded stack."""
