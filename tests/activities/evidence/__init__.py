"""TODO package docstring: tests/activities/evidence."""
