"""Tests of the documentation site: its strict build, generated references, runnable blocks."""
