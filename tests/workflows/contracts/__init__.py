"""TODO package docstring: tests/workflows/contracts."""
