"""A run's report folder packed as one ``tar.gz`` with a manifest of sha256s (the hand-off).

``assay report RUN --archive`` packs the folder (the results JSON, the summary, the ledger,
kept artifacts, figures, the tasks' whole results) beside it as ``<run>_report_<ts>.tar.gz``.
The archive's first member, ``MANIFEST.sha256``, lists every file with its sha256 in
``sha256sum`` form, so ``sha256sum -c MANIFEST.sha256`` verifies an unpacked copy and
:func:`verify_archive` a packed one. Packing is deterministic: members in path order, one
fixed time, owner and mode (folders are implied by the files' paths), so the same folder
always packs to the same bytes. A link or any file that is not a regular file or folder is
refused, and so is a folder over the bounds: the archive holds what the run wrote, nothing
it points to.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
from pathlib import Path

from activities.common.digests import file_sha256

MANIFEST = "MANIFEST.sha256"
MAX_FILES = 20_000
MAX_BYTES = 4 * 1024**3
"""The most files and bytes a report folder may have to be packed."""
_CHUNK = 1024 * 1024


class ArchiveError(ValueError):
    """The folder cannot be packed (or an archive does not verify); the message says why."""


def report_files(folder: Path, *, max_files: int = MAX_FILES,
                 max_bytes: int = MAX_BYTES) -> list[Path]:
    """Every file under ``folder``, in path order, checked against the bounds.

    Raises:
        ArchiveError: a link or special file, or more files or bytes than allowed.
    """
    found: list[Path] = []
    total = 0
    for top, dirs, files in os.walk(folder):
        for name in sorted([*dirs, *files]):
            path = Path(top) / name
            if path.is_symlink() or not (path.is_dir() or path.is_file()):
                raise ArchiveError(f"{path} is a link or not a regular file; the archive "
                                   "takes only what the run wrote: remove it and pack again")
            if path.is_file():
                found.append(path)
                total += path.stat().st_size
        if len(found) > max_files or total > max_bytes:
            raise ArchiveError(f"{folder} has more than {max_files:,} files or {max_bytes:,} "
                               "bytes; pack its parts by hand")
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def pack(folder: Path, dest: Path, *, mtime: int = 0, max_files: int = MAX_FILES,
         max_bytes: int = MAX_BYTES) -> Path:
    """Pack ``folder`` as ``dest`` (written whole or not at all), manifest first; ``dest``.

    Every member carries ``mtime`` (seconds since the epoch), owner 0 and mode 0644, under
    the folder's name.

    Raises:
        ArchiveError: see :func:`report_files`.
    """
    files = report_files(folder, max_files=max_files, max_bytes=max_bytes)
    root = folder.name
    names = [f"{root}/{p.relative_to(folder).as_posix()}" for p in files]
    manifest = "".join(f"{file_sha256(p)}  {n.partition('/')[2]}\n"
                       for p, n in zip(files, names, strict=True)).encode()
    tmp = dest.with_name(f".{dest.name}.tmp")
    try:
        with tmp.open("wb") as out, gzip.GzipFile(filename="", mode="wb", fileobj=out,
                                                  mtime=mtime) as zipped, \
                tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
            tar.addfile(_member(f"{root}/{MANIFEST}", len(manifest), mtime),
                        io.BytesIO(manifest))
            for path, name in zip(files, names, strict=True):
                with path.open("rb") as handle:
                    tar.addfile(_member(name, path.stat().st_size, mtime), handle)
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dest


def _member(name: str, size: int, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = size, mtime, 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def verify_archive(path: Path) -> int:
    """Check every member of a packed report against its manifest; the files checked.

    Raises:
        ArchiveError: no manifest, a file missing from it or the archive, or a sha256 that
            differs.
    """
    with tarfile.open(path, "r:gz") as tar:
        members = [m for m in tar.getmembers() if m.isfile()]
        if not members or not members[0].name.endswith(f"/{MANIFEST}"):
            raise ArchiveError(f"{path}: its first member is not {MANIFEST}")
        listed = _manifest(tar, members[0])
        seen: dict[str, str] = {}
        for member in members[1:]:
            handle = tar.extractfile(member)
            assert handle is not None
            seen[member.name.partition("/")[2]] = hashlib.sha256(handle.read()).hexdigest()
    if seen != listed:
        wrong = sorted(set(seen.items()) ^ set(listed.items()))
        raise ArchiveError(f"{path}: does not match its manifest at "
                           f"{', '.join(name for name, _ in wrong[:5])}")
    return len(seen)


def _manifest(tar: tarfile.TarFile, member: tarfile.TarInfo) -> dict[str, str]:
    handle = tar.extractfile(member)
    assert handle is not None
    lines = handle.read().decode().splitlines()
    return {name: digest for digest, _, name in (line.partition("  ") for line in lines)}

