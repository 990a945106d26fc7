"""Text from outside, made plain: no terminal escape sequences, no control characters.

A plan's action, a goal, a gate's comment or a person's name is shown later in a terminal
(``assay status``, ``watch``, ``report``) and in Markdown reports. An escape sequence in it
would recolour, move the cursor or retitle the terminal of whoever reads it, and a
bidirectional override would show text other than what is there. Such text is made plain once,
where it enters (the contracts' :data:`workflows.contracts.base.PlainText` fields), so every
reader downstream may print it as it is.
"""

from __future__ import annotations

import re
import unicodedata

ESCAPES = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]"       # CSI: colours, cursor moves
    r"|\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC: window titles, hyperlinks
    r"|[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)?"  # DCS, SOS, PM, APC strings
    r"|[ -/]*[0-~]?)"                      # any other escape and its final byte
    r"|\x9b[0-?]*[ -/]*[@-~]"              # 8-bit CSI
    r"|[\x90\x98\x9d-\x9f][^\x07\x1b\x9c]*(?:\x07|\x9c)?",  # 8-bit OSC, DCS...
    re.DOTALL)
"""Terminal escape sequences, whole: their parameters go with them."""
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Bidirectional overrides and isolates: they reorder what is shown."""


def plain_text(text: str) -> str:
    """``text`` without escape sequences, control characters or bidirectional controls.

    Newlines and tabs stay (comments and actions have lines); a carriage return, a bell, a
    backspace and the like go, as does every escape sequence with its parameters.
    """
    text = ESCAPES.sub("", text)
    return "".join(c for c in text if c in "\n\t" or not is_control(c))


def is_control(char: str) -> bool:
    """A character that acts on a terminal or on the order of text rather than showing."""
    return unicodedata.category(char) == "Cc" or char in BIDI_CONTROLS


_CUT = "…[{n} more]"


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the cut saying how much was left out."""
    if len(text) <= limit:
        return text
    keep = max(0, limit - len(_CUT.format(n=len(text))))
    return text[:keep] + _CUT.format(n=len(text) - keep)
