"""TODO package docstring: tests/activities/reflection."""
