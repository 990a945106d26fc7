"""TODO package docstring: tests/activities/memory."""
