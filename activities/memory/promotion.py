"""Who makes a memory promotion final: memory itself, or a person (``memory.promotion``).

Under ``auto`` a pattern seen in three tasks becomes an active rule and a job spec with two
clean runs a cached template at once; under ``person`` both wait as candidates (a rule of
status ``candidate``, a template not yet cached) until ``assay memory approve`` makes them
final, as the skill library's candidates wait for ``assay skills approve``.
"""

from __future__ import annotations

from workflows.contracts.memory import CACHE_AFTER, Promotion, RuleStatus


def promoted_status(promotion: Promotion) -> RuleStatus:
    """The status a newly promoted rule gets: applied at once, or a candidate for a person."""
    return "active" if promotion == "auto" else "candidate"


def template_cached(was_cached: bool, clean_successes: int, promotion: Promotion) -> bool:
    """Whether a template is cached (used): after ``CACHE_AFTER`` clean runs, or approval."""
    return was_cached or (promotion == "auto" and clean_successes >= CACHE_AFTER)
