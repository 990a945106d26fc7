"""TODO package docstring: tests/workflows/research."""
