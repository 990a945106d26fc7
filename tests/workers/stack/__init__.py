"""TODO package docstring: tests/workers/stack."""
