"""A subagent's recovery memory: the fix a failing job takes next, and how the memory learns.

A subagent pattern remembers the job changes that fixed its kind of task
(``SkillPattern.recovery``, most proven first, at most ``MEMORY_LIMIT``). A task run as the
subagent tries them on a failed run before reflection's rule table (``workflows.task.subagent``):

- **Choosing** (:func:`next_fix`) — the first fix not yet tried in this task that *applies* to
  the failing job: the job has the field, does not already hold the fix's value, and holds
  the value the fix started from — or, for a number, a value on the same side of the fix's
  value as the one it started from (a batch of 32 takes the 16 that cured a batch of 64).
- **Learning** (:func:`remembered`) — in the order the task tried them: a fix that *cured*
  (the run after it succeeded) moves to the front and its misses reset; a fix that *missed*
  (the run after it failed, or the guardrails refused it) moves one place down, and is
  dropped once it has missed ``DROP_AFTER`` times in a row. Then the job changes that cured a
  completed task outside the memory (reflection's patches) join it at the front. The list
  keeps its first ``MEMORY_LIMIT`` fixes.

Pure models and functions only: the workflow sandbox imports this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from workflows.common.canonical import canonical_json
from workflows.common.patching import PatchError, field_value
from workflows.contracts.plan import JobSpec
from workflows.contracts.reflection import PatchChange
from workflows.contracts.subagents import MemoryTry

MEMORY_LIMIT = 16
"""Fixes a subagent remembers (``SkillPattern.recovery``'s bound)."""
DROP_AFTER = 3
"""Misses in a row after which a remembered fix is forgotten."""


def fix_key(fix: PatchChange) -> str:
    """What identifies a remembered fix: the field it sets and the value it sets it to."""
    return f"{fix.field}={canonical_json(fix.new_value)}"


def _number(value: object) -> float | None:
    """``value`` as a float when it is a number (not a boolean), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _same_side(current: object, start: object, target: object) -> bool:
    """Whether ``current`` lies where ``start`` did, seen from ``target`` (all numbers)."""
    now, was, goal = _number(current), _number(start), _number(target)
    if now is None or was is None or goal is None:
        return False
    return (was - goal) * (now - goal) > 0


def applied_change(fix: PatchChange, job: JobSpec) -> PatchChange | None:
    """The change ``fix`` makes to ``job``, or ``None`` when it does not apply to it."""
    try:
        present, current = field_value(job, fix.field)
    except PatchError:
        return None
    if not present or current == fix.new_value:  # already there: no identical retry
        return None
    if current != fix.old_value and not _same_side(current, fix.old_value, fix.new_value):
        return None
    return PatchChange(field=fix.field, old_value=current, new_value=fix.new_value,
                       reason=fix.reason or "a fix the subagent remembers")


def next_fix(memory: Sequence[PatchChange], job: JobSpec, tried: Iterable[str]
             ) -> tuple[PatchChange, PatchChange] | None:
    """The next untried remembered fix that applies to ``job``, with the change it makes.

    ``tried`` holds the :func:`fix_key` of every fix this task already tried.
    """
    done = set(tried)
    for fix in memory:
        if fix_key(fix) in done:
            continue
        change = applied_change(fix, job)
        if change is not None:
            return fix, change
    return None


def remembered(memory: Sequence[PatchChange], misses: Mapping[str, int],
               tries: Sequence[MemoryTry], cures: Sequence[PatchChange] = ()
               ) -> tuple[list[PatchChange], dict[str, int]]:
    """The memory and its misses in a row after one task's tries (the module's rule).

    Args:
        memory: the remembered fixes, most proven first.
        misses: misses in a row of each fix, by :func:`fix_key` (absent: none).
        tries: the task's tries, in the order it made them.
        cures: job changes outside the memory that a completed task ran with.
    """
    entries = list(memory)
    counts = dict(misses)
    for item in tries:
        key = fix_key(item.fix)
        at = next((i for i, fix in enumerate(entries) if fix_key(fix) == key), None)
        if at is None:
            continue
        if item.result == "cured":
            entries.insert(0, entries.pop(at))
            counts.pop(key, None)
        elif item.missed:
            counts[key] = counts.get(key, 0) + 1
            if counts[key] >= DROP_AFTER:
                del entries[at]
                counts.pop(key)
            elif at + 1 < len(entries):
                entries[at], entries[at + 1] = entries[at + 1], entries[at]
    for cure in reversed(cures):
        key = fix_key(cure)
        entries = [cure, *(fix for fix in entries if fix_key(fix) != key)]
        counts.pop(key, None)
    entries = entries[:MEMORY_LIMIT]
    kept = {fix_key(fix) for fix in entries}
    return entries, {k: n for k, n in counts.items() if k in kept and n > 0}


def cures_of(fixes: Sequence[PatchChange], tries: Sequence[MemoryTry], *,
             completed: bool) -> list[PatchChange]:
    """The job changes outside the memory that a completed task ran with (none otherwise)."""
    if not completed:
        return []
    tried = {fix_key(t.fix) for t in tries}
    return [fix for fix in fixes if fix_key(fix) not in tried]
