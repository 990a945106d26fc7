"""The artifact store: files Assay keeps and hands out by sha256, and nothing else.

``store.ArtifactStore`` is the interface (``put`` a file, ``open`` it by digest);
``store.LocalArtifactStore`` keeps files in a directory (``<data dir>/store`` unless
``ASSAY_STORE_PATH`` says otherwise). ``assay run`` puts a plan's inputs and a goal's data here;
the sandbox copies them into a job's working directory from here only.
``store.open_beneath`` opens a file below a root without following any link, for the other
places a worker must read only what lies under its own directories.
"""


from activities.artifacts.store import (
    ArtifactStore,
    LocalArtifactStore,
    NotStoredError,
    StoredFile,
    StoreError,
    UnsafeEntryError,
    is_sha256,
    open_beneath,
)

__all__ = [
    "ArtifactStore",
    "LocalArtifactStore",
    "NotStoredError",
    "StoreError",
    "StoredFile",
    "UnsafeEntryError",
    "is_sha256",
    "open_beneath",
]
