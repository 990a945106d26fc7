"""Tests of workflows/branching: branches, their changes, comparison and the plan's alternatives."""
