"""The artifact store: files Assay keeps and hands out by sha256, and nothing else.

``store.ArtifactStore`` is the interface (``put`` a file; ``open`` or ``fetch`` it by digest,
checked before it is handed out); ``store.LocalArtifactStore`` keeps files in a directory
(``<data dir>/store`` unless ``ASSAY_STORE_PATH`` says otherwise), ``s3.S3ArtifactStore`` in
S3-compatible object storage, for pools on separate hosts; ``location.store_at`` picks one by
``ASSAY_STORE_URL`` (``file:///path`` or ``s3://bucket/prefix``). ``assay run`` puts a plan's
inputs and a goal's data here; the sandbox fetches inputs and dependency artifacts from here
only, and puts every artifact a job leaves; verification and the report's copies read them
back from here by digest. ``store.open_beneath`` opens a file below a root without following
any link, for the places a worker must read only what lies under its own directories.
"""


from activities.artifacts.location import store_at
from activities.artifacts.store import (
    ArtifactStore,
    DamagedEntryError,
    LocalArtifactStore,
    NotStoredError,
    StoredFile,
    StoreError,
    StoreUnavailableError,
    TooLargeError,
    UnsafeEntryError,
    is_sha256,
    open_beneath,
)

__all__ = [
    "ArtifactStore",
    "DamagedEntryError",
    "LocalArtifactStore",
    "NotStoredError",
    "StoreError",
    "StoreUnavailableError",
    "StoredFile",
    "TooLargeError",
    "UnsafeEntryError",
    "is_sha256",
    "open_beneath",
    "store_at",
]
