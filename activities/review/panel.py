"""The three reviewers of the approval gate (the review phase), as Temporal activities.

Each takes a :class:`~workflows.contracts.verdicts.ReviewInput` and returns a structured
:class:`~workflows.contracts.verdicts.ReviewVerdict`; the gate itself is
:func:`workflows.contracts.verdicts.panel_approves`.
The reviewers are deterministic rules, not models:
the same job always gets the same verdict, every finding names its line, and a verdict is
APPROVE exactly when no finding is critical.

- ``review_ops`` (agents pool, pure): the job spec is complete, consistent and within policy.
- ``review_quality_safety`` (agents pool, pure): what the code would do, read statically.
- ``review_infrastructure`` (sandbox pool): whether the machine that runs jobs can run this
  one; a method of :class:`InfrastructureReviewer`, which the sandbox worker builds.

The two pure reviews run in a thread: a source near the 1 MB limit takes about a second to
read, which must not stall the worker's event loop.
"""

from __future__ import annotations

import asyncio

from activities.review.infra import InfrastructureReviewer
from activities.review.ops import review_ops_spec
from activities.review.safety.check import review_quality_safety_source
from workflows.catalogue import REVIEW_OPS, REVIEW_QUALITY_SAFETY
from workflows.contracts.verdicts import ReviewInput, ReviewVerdict

__all__ = ["InfrastructureReviewer", "review_ops", "review_quality_safety"]


@REVIEW_OPS.defn
async def review_ops(req: ReviewInput) -> ReviewVerdict:
    """Ops review: source, filename, args against argparse, metrics, artifacts, resources."""
    return await asyncio.to_thread(review_ops_spec, req)


@REVIEW_QUALITY_SAFETY.defn
async def review_quality_safety(req: ReviewInput) -> ReviewVerdict:
    """Quality and safety review: a static reading of the job's source."""
    return await asyncio.to_thread(review_quality_safety_source, req)
