"""The words matched: a pattern's text, and the several wordings of a goal that are searched.

Deterministic, no model: a pattern's name words, description, context and signature; a goal
as written, with data files said as data, its keywords, and its sentences and clauses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from skills.apply import extension
from skills.index.embed import MAX_TEXT
from workflows.contracts.patterns import SkillPattern
from workflows.contracts.words import STOP_WORDS

FILE_KINDS = {
    "csv": "csv table", "tsv": "tsv table", "parquet": "parquet table", "feather": "table",
    "xlsx": "excel spreadsheet table", "xls": "excel spreadsheet table",
    "json": "json records", "jsonl": "json records", "txt": "text document",
    "md": "markdown text document", "pdf": "pdf document", "html": "html page",
    "png": "png image", "jpg": "jpeg image", "jpeg": "jpeg image", "tif": "tiff image",
    "tiff": "tiff image", "npy": "numpy array", "h5": "hdf5 array", "nc": "netcdf array",
}
"""Data-file extensions and the words a goal would use for them."""
_EXT = "(" + "|".join(FILE_KINDS) + ")"
_FILE = re.compile(rf"\b[\w-]+\.{_EXT}\b"  # a file name, or an extension and what it names
                   rf"|\b{_EXT}\b(?:\s+(?:files?|tables?|data|documents?|images?))?",
                   re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")
_CLAUSE = re.compile(r",\s+(?:and\s+|then\s+)?|\s+(?:and then|then)\s+", re.IGNORECASE)


def clean(text: str) -> str:
    """``text`` cut to ``MAX_TEXT`` characters, its runs of white space made single spaces."""
    return " ".join(text[:MAX_TEXT].split())


def skill_text(pattern: SkillPattern) -> str:
    """The text a pattern is matched on: name words, description, context and signature.

    Plain words without labels: every token of a static embedding counts in its mean.
    """
    sig = pattern.signature
    kinds = [FILE_KINDS.get(t.lower(), t) for t in (*sig.input_types, *sig.output_types)]
    parts = [pattern.name.replace("-", " "), pattern.description, pattern.context,
             *sig.keywords, *kinds, *pattern.tags]
    return clean(" ".join(parts))


def keywords(text: str) -> list[str]:
    """The significant words of ``text``, lower-cased, stop words dropped, in order."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


def _significant(text: str) -> list[str]:
    """The significant words of ``text`` as written: an acronym keeps its capitals."""
    return [w if w.isupper() and len(w) > 1 else w.lower() for w in _WORD.findall(text)
            if w.lower() not in STOP_WORDS]


def _with_file_kinds(text: str) -> str:
    """``text`` with file names and extensions said as data (``sales.csv`` → a csv table)."""
    return _FILE.sub(lambda m: ("a " + FILE_KINDS[m.group(1).lower()]) if m.group(1)
                     else FILE_KINDS[m.group(2).lower()], text)


def reformulate(text: str, n: int, *, data: Sequence[str] = ()) -> list[str]:
    """Up to ``n`` distinct wordings of a goal or action to search, most faithful first.

    The text itself; with data-file types spelled out; its keywords; when ``data`` names the
    files given with it, the text with the kinds of those files said (``Does y depend on x``
    with ``data.csv``: "... in a csv table"), so a short goal is still matched to what works
    on its data; then its sentences and clauses of two keywords or more. Deterministic, no
    model.

    Raises:
        ValueError: ``n`` is below 1.
    """
    if n < 1:
        raise ValueError(f"reformulate needs n >= 1, not {n}")
    base = clean(text)
    if not base:
        return []
    pieces = [clean(clause) for sentence in _SENTENCE.split(base)
              for clause in _CLAUSE.split(sentence)]
    pieces = [p.strip(" .;:!?") for p in pieces if len(keywords(p)) >= 2]
    forms = [base, _with_file_kinds(base), " ".join(_significant(_with_file_kinds(base))),
             _with_data(base, data), *(pieces if len(pieces) > 1 else [])]
    out: list[str] = []
    seen: set[str] = set()
    for form in forms:
        key = form.lower()
        if form and key not in seen:
            seen.add(key)
            out.append(form)
    return out[:n]


def _with_data(base: str, data: Sequence[str]) -> str:
    """``base`` followed by the kinds of the data files given with it (empty: none known)."""
    kinds = dict.fromkeys(FILE_KINDS[e] for e in (extension(n) for n in data[:8])
                          if e in FILE_KINDS)
    return f"{base.rstrip(' .?!')} in a {' and a '.join(kinds)}" if kinds else ""


