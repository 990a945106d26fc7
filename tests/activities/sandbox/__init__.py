"""TODO package docstring: tests/activities/sandbox."""
