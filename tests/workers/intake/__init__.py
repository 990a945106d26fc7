"""TODO package docstring: tests/workers/intake."""
