"""One batch in, an ``Extraction`` out: the steps of extraction in order.

The batch becomes cases and groups, each group a draft, the best-supported draft of each task
type is placed in the library, and the result is sorted, so the same batch in any order gives
the same patterns.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from skills.extract.cases import cases_of, groups_of
from skills.extract.draft import Draft, draft_pattern
from skills.extract.versions import Extraction, place
from workflows.contracts.patterns import Skill
from workflows.contracts.skills import TaskOutcome


def extract(outcomes: Sequence[TaskOutcome], existing: Sequence[Skill], *, now: datetime,
            auto_approve: float = 1.01) -> Extraction:
    """Extract patterns from a batch of outcomes, against the library's existing patterns.

    Outcomes are grouped by task type and job file; a group with at least ``MIN_SUCCESSES``
    successes yields one pattern (one per task type: the best-supported group). A pattern of a
    known family either grows the version with the same job (``updated``) or becomes a new
    candidate version when it does at least as well as the active one.

    Args:
        outcomes: the batch (a repeated ``run_id/task_id`` counts once, the later one).
        existing: every pattern of the library, retired ones included (version numbers).
        now: the time stamped on new and grown patterns.
        auto_approve: new patterns at least this confident start ``active`` (>1: never).

    Raises:
        ValueError: ``auto_approve`` outside [0, 1.01].
    """
    if not 0 <= auto_approve <= 1.01:
        raise ValueError(f"auto_approve is {auto_approve!r}; it must be within [0, 1.01]")
    result = Extraction()
    cases, ignored = cases_of(outcomes)
    if ignored:
        result.skipped.append(f"{ignored} outcome(s) had no resolved job (no source) and were "
                              "not considered")
    drafts: dict[str, list[Draft]] = {}
    for group in groups_of(cases):
        draft = draft_pattern(group)
        if isinstance(draft, str):
            result.skipped.append(draft)
        else:
            drafts.setdefault(draft.pattern.name, []).append(draft)
    for name in sorted(drafts):
        best, *rest = sorted(drafts[name], key=lambda d: (-len(d.group.ok), -d.group.ratio,
                                                          d.group.filename))
        result.skipped.extend(
            f"{d.group.label}: {len(d.group.ok)} successes, but {best.group.label} of the same "
            "task type had more support; one pattern per task type and batch" for d in rest)
        place(best, existing, result, now=now, auto_approve=auto_approve)
    for skills in (result.new, result.versions, result.updated):
        skills.sort(key=lambda s: (s.pattern.name, s.pattern.version))
    return result
