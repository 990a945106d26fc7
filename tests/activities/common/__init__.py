"""Tests of activities/common: primitives every capability shares."""
