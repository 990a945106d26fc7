"""TODO package docstring: tests/skills."""
