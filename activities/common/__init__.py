"""Primitives shared by every capability, written once and imported everywhere else.

The I/O half of them: file digests (``digests``), hash chains (``chain``), bounded walks and
removal of trees someone else made (``trees``), heartbeating while an activity waits
(``heartbeat``) and the local activity that passes a workflow's turn (``turns``). The
database (its engine, row limits and migrations), which the skill library's store shares,
lives in :mod:`database`; the deterministic half (canonical JSON, words and slugs,
validation-error texts, error types), which workflows need too, lives in
:mod:`workflows.common`.
"""

from activities.common.chain import GENESIS, link
from activities.common.digests import drain, file_sha256

__all__ = [
    "GENESIS",
    "drain",
    "file_sha256",
    "link",
]
