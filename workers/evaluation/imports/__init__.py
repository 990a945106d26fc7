"""Benchmark adapters: a local copy of a public benchmark turned into an Assay suite.

``dabench`` reads InfiAgent-DABench's layout (questions JSONL, labels JSONL, a tables folder):
each question a goal with its table, its constraints in its words, its answer format and its
labels. ``discoverybench`` reads DiscoveryBench's (metadata JSON beside its datasets, the
queries and their gold hypotheses): each query a goal whose hypothesis a judge role scores.
``reading`` holds what both share: JSONL and JSON read line by line, and the error that names
the file and line of what is wrong. Nothing is downloaded: the user brings the folder.
"""

from workers.evaluation.imports.dabench import import_dabench
from workers.evaluation.imports.discoverybench import import_discoverybench
from workers.evaluation.imports.reading import BenchmarkError, write_suite

__all__ = ["BenchmarkError", "import_dabench", "import_discoverybench", "write_suite"]
