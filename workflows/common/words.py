"""Words and slugs: how Assay cuts names and matchable words out of free text.

Run IDs are cut from plan names, goal runs are named after the goal, task types after the
action and skills after task types; the skill index matches a goal on its significant
words. Every one of those names is stored (in workflow IDs, memory rows, skill ids), so the
rules that make them are kept here once and do not change: a changed rule would rename
what people already have.

There are two stop lists. :data:`STOP_WORDS` is the one to use for matching text.
:data:`TASK_TYPE_STOP_WORDS` is the shorter list task types were first made with; task
types key memory and name skills, so it stays as it is rather than follow the first.
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
"""The words a task type leaves out (see ``workflows.contracts.memory.task_type``)."""

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
