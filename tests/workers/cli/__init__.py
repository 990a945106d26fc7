"""TODO package docstring: tests/workers/cli."""
