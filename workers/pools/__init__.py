"""Worker pools: which workflows and activities each task queue serves, built from settings."""


from workers.pools.builders import PoolSpec, build_specs, make_runtime, run_pools

__all__ = [
    "PoolSpec",
    "build_specs",
    "make_runtime",
    "run_pools",
]
