"""Deterministic extraction of skill and subagent patterns from a batch of finished tasks.

Every ``EXTRACT_EVERY`` outcomes the library contrasts the batch's successes with its failures
and generalises the jobs that worked into typed templates: arguments become parameters with
ranges the failures bound, the job's imports and data types become preconditions, and a kind
of work that only succeeded after repairs becomes a subagent whose memory is the repairs that
worked. No model, database or vector store is involved: the same batch and library give the
same patterns, so the activity storing them can be retried.

``batch.extract`` runs the steps in order: ``cases`` groups the outcomes, ``draft`` turns a
group into a pattern (with ``contrast`` for parameters and the contrast text, ``preconditions``
for what the successes had in common), and ``versions`` places each draft in the library as a
new pattern, a new version or grown evidence. The text made here (description, context,
contrast) is computed from the data; a model may later rewrite the prose, never the numbers.
"""

from skills.extract.batch import extract
from skills.extract.draft import MIN_SUCCESSES, confidence
from skills.extract.versions import Extraction

__all__ = [
    "MIN_SUCCESSES",
    "Extraction",
    "confidence",
    "extract",
]
