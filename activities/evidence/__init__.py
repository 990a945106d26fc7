"""Evidence: verifying what a job left behind, and re-linking what it misplaced.

``verify.EvidenceVerifier`` holds the ``verify_evidence`` activity: expected artifacts present,
non-empty and unchanged (sha256, read only below the worker's work directory), declared metrics
and machine-checkable criteria; ``relink.Relinker`` re-scans a working directory for evidence
written under another name (the verification retry), without re-running anything.
"""

from activities.evidence.relink import Relinker
from activities.evidence.verify import EvidenceVerifier

__all__ = [
    "EvidenceVerifier",
    "Relinker",
]
