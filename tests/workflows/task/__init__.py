"""TODO package docstring: tests/workflows/task."""
