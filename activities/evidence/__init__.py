"""Evidence: verifying what a job left behind, and re-linking what it misplaced.

``verify.verify_evidence`` checks expected artifacts (present, non-empty, sha256), declared
metrics and machine-checkable criteria; ``relink.Relinker`` re-scans a working directory for
evidence written under another name (the verification retry), without re-running anything.
"""


from activities.evidence.relink import Relinker
from activities.evidence.verify import verify_evidence

__all__ = [
    "Relinker",
    "verify_evidence",
]
