"""The operator's local documentation folder: one text file at a time, never outside it.

A path is relative to the folder; an absolute path, a ``..`` step, or a link that resolves
outside the folder is refused, and so are files whose names say they hold credentials
(``.env``, keys, certificates). Binary files are refused; text is read up to a bound.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from activities.common.trees import MAX_DEPTH, TreeLimitError, walk
from activities.research.symbols import NotFound

MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_LISTED = 200
MAX_SEEN = 20_000
"""Entries a listing looks at, at most (a folder of a million files must not stall it)."""
SECRET_NAMES = re.compile(
    r"(^\.env(\..*)?$|^\.netrc$|^\.pgpass$|^id_(rsa|dsa|ecdsa|ed25519)|\.(pem|key|p12|pfx|crt)$"
    r"|credential|secret|password|token)", re.IGNORECASE)


class Refused(ValueError):
    """A path the docs folder will not read (it leaves the folder, or names a secret)."""


class DocsFolder:
    """Reads text files below ``root``; ``root`` None: no folder is configured.

    Args:
        root: the operator's documentation folder (``ASSAY_DOCS_DIR``).
    """

    def __init__(self, root: Path | None) -> None:
        self.root = root.resolve() if root is not None else None

    def read(self, relative: str) -> str:
        """The text of ``relative`` (an empty path lists the folder's files).

        Raises:
            Refused: the path leaves the folder or names a file of credentials.
            NotFound: no folder is configured, or no such text file is in it.
        """
        if self.root is None:
            raise NotFound("no local documentation folder is configured on this worker "
                           "(the operator sets ASSAY_DOCS_DIR)")
        if not relative.strip("/ "):
            return self.listing()
        path = self._inside(relative)
        if not path.is_file():
            raise NotFound(f"the documentation folder has no file {relative!r}; "
                           "ask for `docs:` to list its files")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise NotFound(f"{relative!r} is over {MAX_FILE_BYTES} bytes; not read")
        raw = path.read_bytes()
        if b"\0" in raw[:8192]:
            raise NotFound(f"{relative!r} is not a text file")
        return raw.decode("utf-8", errors="replace")

    def listing(self) -> str:
        """The folder's readable files, by relative path (at most ``MAX_LISTED``)."""
        assert self.root is not None
        names: list[str] = []
        try:
            for found in walk(self.root, max_entries=MAX_SEEN, breadth_first=True,
                              prune=lambda f: f.depth >= MAX_DEPTH,
                              on_error=lambda _r, _e: None):
                if len(names) >= MAX_LISTED:
                    names.append("…")
                    break
                path = Path(found.entry.path)
                if (found.entry.is_file(follow_symlinks=False) and not _secret(Path(found.rel))
                        and _below(path.resolve(), self.root)):
                    names.append(found.rel)
        except TreeLimitError:
            names.append("…")  # a tree too large to list whole: what was seen
        return "Files of the documentation folder:\n" + ("\n".join(names) or "(none)")

    def _inside(self, relative: str) -> Path:
        assert self.root is not None
        given = PurePosixPath(relative)
        if given.is_absolute() or ".." in given.parts or "\\" in relative:
            raise Refused(f"{relative!r} is not a path inside the documentation folder "
                          "(no absolute paths, no '..')")
        if _secret(Path(given)):
            raise Refused(f"{relative!r} looks like a file of credentials; it is never read")
        path = (self.root / given).resolve()
        if not _below(path, self.root):
            raise Refused(f"{relative!r} leads outside the documentation folder")
        return path


def _below(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _secret(relative: Path) -> bool:
    return any(SECRET_NAMES.search(part) for part in relative.parts)
