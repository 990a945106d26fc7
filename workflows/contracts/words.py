"""Words and slugs: how Assay cuts names and matchable words out of free text, and counts nouns.

Run IDs are cut from plan names, goal runs are named after the goal and skills after task
kinds; the skill index matches a goal on its significant words. Every one of those names is
stored (in workflow IDs, memory rows, skill ids), so the rules that make them are kept here
once and do not change: a changed rule would rename what people already have.

There are two stop lists. :data:`STOP_WORDS` is the one to use for matching text.
:data:`TASK_TYPE_STOP_WORDS` is the shorter list task types were first made with; a skill's
keywords still leave those words out, so it stays as it is rather than follow the first.
"""

from __future__ import annotations

import re

STOP_WORDS = frozenset({
    "a", "an", "the", "and", "or", "but", "if", "then", "than", "so", "of", "in", "on", "at", "to",
    "for", "from", "by", "with", "without", "into", "onto", "over", "under", "about", "as", "is",
    "are", "was", "were", "be", "been", "being", "do", "does", "did", "done", "have", "has", "had",
    "having", "i", "me", "my", "we", "our", "you", "your", "it", "its", "this", "that", "these",
    "those", "there", "here", "what", "which", "who", "whom", "how", "why", "when", "where", "can",
    "could", "should", "would", "will", "shall", "may", "might", "must", "please", "want", "need",
    "like", "just", "some", "any", "each", "every", "all", "both", "either", "also", "only",
    "very", "more", "most", "much", "many", "using", "use",
})
"""Words too common to say what a text asks for; dropped before matching."""

TASK_TYPE_STOP_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is",
    "it", "its", "of", "on", "or", "over", "per", "so", "than", "that", "the", "their",
    "then", "these", "this", "those", "to", "under", "up", "with", "within", "without",
    "via", "using", "use", "each", "all", "any", "both", "every", "our", "your", "we", "you",
})
"""The words a skill's keywords leave out: the list task types were once made with (a task
type is now a kind, :mod:`workflows.contracts.kinds`), kept so keywords stay as they were."""

_SLUG_WORD = re.compile(r"[a-z0-9]+")


def slug_words(text: str) -> list[str]:
    """The runs of ASCII letters and digits in ``text``, lower-cased, in order."""
    return _SLUG_WORD.findall(text.lower())


def slug(text: str, *, limit: int, empty: str, whole_words: bool = True) -> str:
    """``text`` as lower-case ASCII words joined by single hyphens, at most ``limit`` long.

    Args:
        text: any text; what is not an ASCII letter or digit separates words.
        limit: the most characters the slug may have.
        empty: the slug of a text without a single letter or digit.
        whole_words: stop before the first word that would pass ``limit`` (a first word
            longer than ``limit`` is cut); else cut at ``limit`` characters, mid-word if
            need be.
    """
    found = slug_words(text)
    if not whole_words:
        return "-".join(found)[:limit].rstrip("-") or empty
    out = ""
    for word in found:
        longer = f"{out}-{word}" if out else word
        if len(longer) > limit:
            return out or word[:limit]
        out = longer
    return out or empty


_VOWEL = re.compile(r"[aeiouy]")
_SUFFIXES = ("ly", "ing", "ed")


def stem(word: str) -> str:
    """A light, fixed stem of one lower-case word, so word forms match (never for names).

    ``depends`` and ``depend``, ``linearly`` and ``linear``, ``fitting``, ``fitted`` and
    ``fit``, ``groups`` and ``group`` each share a stem. Plural ``-s``/``-es``/``-ies``, then
    one of ``-ly``, ``-ing``, ``-ed``, then a doubled final consonant and a final ``e`` are
    cut, each only while a stem of three letters or more with a vowel is left. Words of three
    letters or fewer are kept whole. Used to match a goal against a skill's precondition
    words; names (run ids, task types, skill names) are never made from stems.
    """
    w = word
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in _SUFFIXES:
        rest = w[: -len(suffix)]
        if w.endswith(suffix) and len(rest) >= 3 and _VOWEL.search(rest):
            w = rest
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiousy":
        w = w[:-1]
    if len(w) > 3 and w.endswith("e") and not w.endswith("ee"):
        w = w[:-1]
    return w


def word_stems(text: str) -> set[str]:
    """The stems of the words of ``text`` (:func:`slug_words`, then :func:`stem`)."""
    return {stem(w) for w in slug_words(text)}


def plural(n: int, word: str, many: str = "") -> str:
    """``1 task``, ``2 tasks`` (``many`` when the plural is not ``word`` + s)."""
    return f"{n} {word if n == 1 else many or word + 's'}"


COUNTED = re.compile(r"\b1 (task|decision|skill|job)s\b")
"""A count of one with a plural noun, in text runs wrote before :func:`plural` (stored events,
gate questions): :func:`singular_counts` mends it when the text is shown."""


def singular_counts(text: str) -> str:
    """``run plan p (1 tasks)?`` as ``run plan p (1 task)?``."""
    return COUNTED.sub(r"1 \1", text)
