"""TODO package docstring: tests/workflows/agents."""
