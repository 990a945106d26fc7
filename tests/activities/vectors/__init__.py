"""Tests of the vector index back-ends (activities/vectors)."""
