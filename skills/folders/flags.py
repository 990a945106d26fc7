"""Text in an imported folder that tries to instruct a model: found, never acted on.

A skill's body and references reach prompts, so a folder from outside could carry an
injection ("ignore previous instructions", send ``~/.ssh`` somewhere, pipe a download into a
shell). Import does not refuse such a folder (a security skill may quote these lines); it
flags each line that matches, with the file and line number, so the person who approves the
skill sees it first (``assay skills show``).
"""

from __future__ import annotations

import re

from workflows.contracts.patterns import MAX_FLAGS

_FILES = (r"((~|\$HOME|/home/\w+)/\.(ssh|aws|gnupg|netrc|docker|kube)\b|\bid_(rsa|ed25519|ecdsa)\b"
          r"|\.env\b)")
_WORDS = (r"\b(api[ _-]?keys?|secret[ _-]?keys?|access[ _-]?tokens?|tokens?|passwords?|"
          r"credentials)\b")
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("tells the model to ignore its instructions", re.compile(
        r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|"
        r"all|any|your|system)\b[^.\n]{0,20}\b(instructions?|prompts?|rules|guidelines)\b",
        re.IGNORECASE)),
    ("claims a new role or hidden prompt", re.compile(
        r"\byou are now\b|\bnew (system )?instructions?\s*:|\breveal (your|the) system prompt\b|"
        r"\bdo not (tell|inform|mention (this )?to) the user\b", re.IGNORECASE)),
    ("asks to exfiltrate secrets", re.compile(
        r"\bexfiltrat\w*|\b(upload|send|post|leak|transmit|copy)\b[^\n]{0,80}" + _FILES
        + r"|\b(send|upload|post|leak)\b[^\n]{0,40}" + _WORDS
        + r"[^\n]{0,40}\bto\b[^\n]{0,20}(https?://|external|remote|attacker|webhook)",
        re.IGNORECASE)),
    ("reads private keys or credentials", re.compile(
        r"\b(cat|read|open|print|dump)\b[^\n]{0,30}((~|\$HOME)/\.(ssh|aws|gnupg|netrc)|id_rsa)",
        re.IGNORECASE)),
    ("pipes a download into a shell", re.compile(
        r"\b(curl|wget)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b|\biwr\b[^\n|]*\|\s*iex\b",
        re.IGNORECASE)),
)
_EXCERPT = 160


def flag_text(path: str, text: str, limit: int = MAX_FLAGS, first_line: int = 1) -> list[str]:
    """Each line of ``text`` that tries to instruct a model, as ``path:line: why: excerpt``.

    Args:
        path: the file's path in its folder, for the message.
        text: the file's text.
        limit: at most this many lines are returned.
        first_line: the number in its file of the text's first line.
    """
    found: list[str] = []
    for number, line in enumerate(text.splitlines(), first_line):
        for why, rule in _RULES:
            if rule.search(line):
                excerpt = " ".join(line.split())
                if len(excerpt) > _EXCERPT:
                    excerpt = excerpt[:_EXCERPT - 1] + "…"
                found.append(f"{path}:{number}: {why}: {excerpt}")
                break
        if len(found) >= limit:
            break
    return found
