"""Tests of the offline researcher: documentation lookups."""
