"""Tests of skill retrieval (skills/index)."""
