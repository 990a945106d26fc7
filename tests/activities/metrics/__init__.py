"""Tests of Assay's own metrics: activities/metrics."""
