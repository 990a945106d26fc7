"""Tests of activities/artifacts: the artifact store and reading below a root without links."""
