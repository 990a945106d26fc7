"""TODO package docstring: tests/workflows/library."""
