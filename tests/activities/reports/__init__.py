"""TODO package docstring: tests/activities/reports."""
