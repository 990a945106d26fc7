"""TODO package docstring: tests/activities/agents."""
