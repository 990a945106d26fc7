"""TODO package docstring: tests/activities/events."""
