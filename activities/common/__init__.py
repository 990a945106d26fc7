"""Primitives shared by every capability, written once and imported everywhere else.

The I/O half of them: file digests (``digests``), hash chains (``chain``), stored-payload
limits (``limits``), bounded walks and removal of trees someone else made (``trees``),
heartbeating while an activity waits (``heartbeat``), the database lifecycle (``database``)
and schema migrations (``migrations``). The deterministic half (canonical JSON, words and
slugs, validation-error texts, error types), which workflows need too, lives in
:mod:`workflows.common`.

Only the light modules are re-exported here: importing a digest must not load SQLAlchemy and
Alembic into the sandbox pool or the CLI; import ``database`` and ``migrations`` from their
modules.
"""

from activities.common.chain import GENESIS, link
from activities.common.digests import drain, file_sha256

__all__ = [
    "GENESIS",
    "drain",
    "file_sha256",
    "link",
]
