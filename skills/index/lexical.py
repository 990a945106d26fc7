"""BM25 over a pattern's fields: its name and description weigh more than its body.

A pattern is one document of several fields (BM25F): the words of its name count
``FIELD_WEIGHTS["name"]`` times, its description's twice, and so on down to its guideline,
whose words count least. The document's sparse vector holds each term's saturated BM25 weight;
the index multiplies it by the term's IDF over the library, so a query of distinct terms scores
a pattern by plain BM25.

Terms are lower-cased words with a light English suffix stripping (``models`` and ``modelling``
meet ``model``), but an acronym written in capitals is kept whole: ``FITS`` is the file format,
not the verb ``fits``.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator

from workflows.contracts.patterns import SkillPattern
from workflows.contracts.words import STOP_WORDS

FIELD_WEIGHTS = {"name": 4.0, "description": 2.0, "context": 1.0, "terms": 1.0, "body": 0.3}
"""How many times a word of each field counts (BM25F)."""
BODY_CHARS = 6000
"""Characters of a guideline indexed as its body field."""
K1 = 1.2
B = 0.75
AVG_LENGTH = 150.0
"""Typical field-weighted length of a pattern, in terms (BM25's length normalisation)."""

_WORD = re.compile(r"[A-Za-z0-9]+|[^\W\d_]+")
_SUFFIXES = (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def terms(text: str) -> Iterator[str]:
    """The matchable terms of ``text``, in order: stop words and single letters dropped."""
    for word in _WORD.findall(text):
        if len(word) > 1 and word.isupper() and word.isalpha():
            yield word.lower()
            continue
        low = word.lower()
        if len(low) > 1 and low not in STOP_WORDS:
            yield stem(low)


def stem(word: str) -> str:
    """``word`` without a plural or verb ending (``fitting`` → ``fit``, ``studies`` → ``study``)."""
    if word.isdigit() or len(word) <= 3:
        return word
    for suffix, replacement in _SUFFIXES:
        if not word.endswith(suffix) or (word.endswith(("ss", "us", "is")) and suffix == "s"):
            continue
        root = word[: -len(suffix)] + replacement
        if len(root) < 3:
            return word
        if suffix in ("ing", "ed") and len(root) > 3 and root[-1] == root[-2] \
                and root[-1] not in "lsz":
            root = root[:-1]
        return root
    return word


def term_id(term: str) -> int:
    """The sparse dimension of a term: the same in every process."""
    return zlib.crc32(term.encode())


def fields(pattern: SkillPattern) -> dict[str, str]:
    """A pattern's text by field."""
    sig = pattern.signature
    return {"name": pattern.name.replace("-", " "), "description": pattern.description,
            "context": pattern.context,
            "terms": " ".join([*sig.keywords, *sig.input_types, *sig.output_types,
                               *pattern.tags]),
            "body": pattern.guideline[:BODY_CHARS]}


def document(pattern: SkillPattern) -> tuple[list[int], list[float]]:
    """A pattern's BM25F sparse vector: each term's field-weighted, saturated frequency."""
    counts: dict[int, float] = {}
    length = 0.0
    for name, text in fields(pattern).items():
        weight = FIELD_WEIGHTS[name]
        for term in terms(text):
            key = term_id(term)
            counts[key] = counts.get(key, 0.0) + weight
            length += weight
    norm = K1 * (1 - B + B * length / AVG_LENGTH)
    ordered = sorted(counts.items())
    return [i for i, _ in ordered], [tf * (K1 + 1) / (tf + norm) for _, tf in ordered]


def query(text: str) -> tuple[list[int], list[float]]:
    """A query's sparse vector: each distinct term once."""
    ids = sorted({term_id(t) for t in terms(text)})
    return ids, [1.0] * len(ids)
