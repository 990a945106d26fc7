"""TODO package docstring: tests/workers/pools."""
