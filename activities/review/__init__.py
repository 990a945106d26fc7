"""The review panel's deterministic reviewers: ops, quality & safety, infrastructure.

``panel`` holds the ``review_ops`` and ``review_quality_safety`` activities (agents pool);
``infra.InfrastructureReviewer`` the ``review_infrastructure`` activity (sandbox pool, as it
probes the job machine with ``probe``). ``ops`` and ``args`` check a job spec against its
criteria, ``safety`` statically analyses the code, ``requirements`` and ``imports`` what the
job needs installed.
"""


from activities.review.infra import InfrastructureReviewer
from activities.review.panel import review_ops, review_quality_safety

__all__ = [
    "InfrastructureReviewer",
    "review_ops",
    "review_quality_safety",
]
