"""TODO package docstring: tests/workflows/common."""
