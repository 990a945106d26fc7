"""Hash chains: entries that each carry the digest of the one before, so no edit goes unseen.

Assay keeps two ledgers this way: the memory ledger in PostgreSQL, where each row's ``sha256``
is the digest of its canonical JSON with ``prev`` included, and the run ledger file, where each
line carries the digest of the line before it. Both start from :data:`GENESIS`, link an entry
by adding ``prev`` and hashing the entry's text (:func:`chain`), and are checked by walking
them in order (:class:`ChainWalk`). Changing, removing or reordering an entry breaks every
link after it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

GENESIS = "0" * 64
"""The ``prev`` of a chain's first entry."""

Encode = Callable[[Mapping[str, Any]], str]
"""How a chain turns an entry, ``prev`` included, into the text it hashes."""


class Link(NamedTuple):
    """One entry as chained: the digest it follows, its text and that text's digest."""

    prev: str
    text: str
    digest: str


def sha256_hex(text: str) -> str:
    """The sha256 of a text's UTF-8 bytes, in hex."""
    return hashlib.sha256(text.encode()).hexdigest()


def link(entry: Mapping[str, Any], prev: str, encode: Encode) -> Link:
    """``entry`` chained after the digest ``prev``: its text carries ``prev``."""
    text = encode({**entry, "prev": prev})
    return Link(prev, text, sha256_hex(text))


def chain(entries: Iterable[Mapping[str, Any]], prev: str, encode: Encode) -> list[Link]:
    """Each entry linked to the one before it; the first to ``prev`` (a chain's last digest)."""
    links: list[Link] = []
    for entry in entries:
        links.append(link(entry, prev, encode))
        prev = links[-1].digest
    return links


class ChainWalk:
    """Checks a chain entry by entry, in order, across as many pages as it is read in."""

    def __init__(self) -> None:
        self.prev = GENESIS
        self.count = 0

    def follows(self, prev: object, digest: str) -> bool:
        """Whether an entry carrying ``prev`` follows the last one walked; it becomes the last.

        Args:
            prev: The digest the entry says comes before it.
            digest: The entry's own digest, which the next entry must carry.
        """
        linked = prev == self.prev
        self.prev = digest
        self.count += 1
        return linked
