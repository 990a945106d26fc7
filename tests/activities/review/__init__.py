"""TODO package docstring: tests/activities/review."""
