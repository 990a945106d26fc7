"""A guideline skill in a prompt: a bounded part of its text, its referenced files on demand.

Agent Skills folders disclose progressively: a short description for the index, a body that
may run to many pages, and ``references/`` files an agent opens only when it needs them. A
pattern keeps all of it (the body as ``guideline``, the files as ``references``); what goes into
a prompt is bounded here instead: :func:`prompt_guideline` gives the guideline up to a budget,
cut at a paragraph or line, and names the referenced files that can be asked for;
:func:`load_reference` gives one of them, again up to a budget.
"""

from __future__ import annotations

from workflows.contracts.patterns import SkillPattern

PROMPT_GUIDELINE_CHARS = 8000
"""Characters of a guideline a prompt takes by default (about 2,000 tokens)."""
REFERENCE_CHARS = 16_000
"""Characters of one referenced file a load on demand gives by default."""


def cut(text: str, budget: int) -> str:
    """``text`` if it fits ``budget`` characters, else its start cut at a paragraph or line."""
    if budget < 0:
        raise ValueError(f"the budget is {budget}; it must be 0 or more characters")
    if len(text) <= budget:
        return text
    head = text[:budget]
    for mark in ("\n\n", "\n"):
        at = head.rfind(mark)
        if at >= budget // 2:
            return head[:at].rstrip()
    return head.rstrip()


def prompt_guideline(pattern: SkillPattern, budget: int = PROMPT_GUIDELINE_CHARS) -> str:
    """The guideline as a prompt takes it: at most ``budget`` characters, notes included.

    A guideline that fits is given whole. A longer one is cut at a paragraph or line and
    followed by a note of how much was left out; the referenced files are named (with their
    sizes) so an agent can ask for one by path.

    Raises:
        ValueError: the budget is too small to hold anything but the notes.
    """
    files = _files_note(pattern, budget // 4)
    if len(pattern.guideline) + len(files) <= budget:
        return pattern.guideline + files
    note = "\n\n[… {} more characters of the guideline of skill {} are kept in the library]"
    room = budget - len(files) - len(note.format(len(pattern.guideline), pattern.skill_id))
    if room <= 0:
        raise ValueError(f"a budget of {budget} characters cannot hold the guideline of skill "
                         f"{pattern.skill_id} and its notes; give more")
    head = cut(pattern.guideline, room)
    return head + note.format(len(pattern.guideline) - len(head), pattern.skill_id) + files


def _files_note(pattern: SkillPattern, room: int) -> str:
    """The referenced files by path and size, as many as ``room`` characters hold."""
    if not pattern.references:
        return ""
    note = "\n\nReferenced files (ask for one by path): "
    names: list[str] = []
    for path, text in sorted(pattern.references.items()):
        name = f"{path} ({len(text)} characters)"
        if len(note) + len(", ".join([*names, name])) + 40 > room:
            break
        names.append(name)
    left = len(pattern.references) - len(names)
    return note + ", ".join(names) + (f" and {left} more" if left else "")


def load_reference(pattern: SkillPattern, path: str, budget: int = REFERENCE_CHARS) -> str:
    """One referenced file of ``pattern``, at most ``budget`` characters (cut at a line).

    Raises:
        KeyError: the pattern keeps no file at ``path`` (the message lists those it keeps).
    """
    text = pattern.references.get(path)
    if text is None:
        known = ", ".join(sorted(pattern.references)[:20]) or "none"
        raise KeyError(f"skill {pattern.skill_id} keeps no referenced file {path!r} "
                       f"(it keeps: {known})")
    head = cut(text, budget)
    if len(head) < len(text):
        head += f"\n\n[… {len(text) - len(head)} more characters of {path}]"
    return head
