"""Worker pools: which workflows and activities each task queue serves, built from settings.

``builders`` builds each pool's worker and the Temporal runtime and serves them
(``serve_specs``); ``exporter`` serves a worker's one metrics port (Assay's registry and the
SDK's metrics) and its ``/healthz``, which ``health`` answers (``watch_health``, ``HEALTH``);
``versioning`` names the Worker Deployment version and build id workers poll with;
``codecache`` compiles each workflow module once per process, however often the workflow
sandbox imports it; ``collector`` paces the garbage collector for a worker's many short-lived
objects; ``runner`` gives workflows the SDK's sandbox without a round trip into it
per payload when the data converter takes no serialization context.
"""


from workers.pools.builders import PoolSpec, build_specs, make_runtime, run_pools

__all__ = [
    "PoolSpec",
    "build_specs",
    "make_runtime",
    "run_pools",
]
