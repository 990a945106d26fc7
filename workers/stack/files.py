"""The data directory's files: private to their user, and the disks they live on not full.

The data directory holds every run's history (``temporal.db``), ledgers, logs and reports,
so ``assay up`` creates it (and its logs) readable by its user only, and ``assay check`` warns
about any of them that others may read or write (a directory made by an older version, or by
hand), and fails when a disk Assay writes to has less free space than the sandbox's reserve.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import IO

from workers.settings import Settings

OPEN_BITS = stat.S_IRGRP | stat.S_IWGRP | stat.S_IROTH | stat.S_IWOTH
"""Read or write by the group or others: what a private file or directory must not have.
(Search alone, ``o+x``, lets a sandboxed job's own uid reach its working directory.)"""
MAX_LISTED = 5


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) as 0700; an existing one is left as it is."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o700)
    return path


def open_private_log(path: Path) -> IO[bytes]:
    """Open a log for appending, created 0600 in a 0700 folder if it is new."""
    private_dir(path.parent)
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "ab")


def exposed(settings: Settings) -> list[str]:
    """The data directory's run data that its group or other users may read or write.

    That is the directory itself, ``temporal.db`` (every run's history), the logs, and the
    run and study reports' folders, with the runs' ledgers; each as ``path (mode)``.
    """
    root = settings.root
    studies = root / "studies"
    candidates = [root, *root.glob("temporal.db*"), root / "stack.json", settings.logs_dir,
                  settings.runs_dir, studies]
    for folder in (settings.logs_dir, settings.runs_dir, studies):
        if folder.is_dir():
            candidates += sorted(folder.iterdir())
    candidates += sorted(settings.runs_dir.glob("*/ledger.jsonl"))
    found: list[str] = []
    for path in candidates:
        try:
            mode = path.lstat().st_mode
        except OSError:
            continue
        if not stat.S_ISLNK(mode) and mode & OPEN_BITS:
            found.append(f"{path} ({stat.filemode(mode)})")
    return found


def modes_problem(settings: Settings) -> str | None:
    """What to say of looser modes in the data directory, or None when all are private."""
    found = exposed(settings)
    if not found:
        return None
    more = f" and {len(found) - MAX_LISTED} more" if len(found) > MAX_LISTED else ""
    return (f"others may read or write run data: {', '.join(found[:MAX_LISTED])}{more}; "
            f"make it private with `chmod -R go-rwx {settings.root}`")


def space_report(settings: Settings) -> list[tuple[str, bool, str]]:
    """Free space where Assay writes: the data directory, the local store, the work root.

    Each is ``(name, ok, detail)``; not ok below ``min_free_disk_mb``, the reserve below
    which the sandbox stops jobs. An S3 store has no disk here and is not listed.
    """
    reserve = settings.min_free_disk_mb
    places = [("data directory", settings.root), ("work", settings.work_dir)]
    if not (settings.store_url or "").startswith("s3:"):
        from workers.connection.identity import store_location

        places.insert(1, ("store", Path(store_location(settings))))
    report: list[tuple[str, bool, str]] = []
    for name, path in places:
        existing = next(p for p in (path, *path.parents) if p.exists())
        info = os.statvfs(existing)
        free = info.f_bavail * info.f_frsize // (1 << 20)
        ok = free >= reserve
        detail = f"{free} MiB free on the disk of {path} (reserve {reserve} MiB)"
        if not ok:
            detail += ("; jobs are stopped below it: free some space (finished runs' working "
                       "directories go after ASSAY_WORK_RETENTION_HOURS, unused job "
                       "environments with `assay envs prune`)")
        report.append((f"space {name}", ok, detail))
    return report
