"""TODO package docstring: tests/activities/llm."""
