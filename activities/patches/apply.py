"""Patches as data: applying one to a job spec, its checksum, and its safety summary.

Applying and sealing are pure and live with the workflows (``workflows.common.patching``,
re-exported here), since a task applies its subagent's remembered fixes itself; what a patch
did to a job's reach, and whether two patches are the same retry, are decided here.
"""

from __future__ import annotations

from workflows.common.canonical import canonical_json
from workflows.common.patching import (
    RESOURCE_FIELDS,
    PatchError,
    apply_patch,
    patch_checksum,
    sealed,
)
from workflows.contracts.plan import JobSpec
from workflows.contracts.reflection import PatchChange

__all__ = ["RESOURCE_FIELDS", "PatchError", "apply_patch", "patch_checksum", "safety_checks",
           "same_changes", "sealed"]


def safety_checks(old: JobSpec, new: JobSpec) -> dict[str, str]:
    """What a guarded patch did to the job's reach (guardrails refuse any widening).

    ``resource_ceiling`` is ``narrowed`` when a resource went down and none went up, else
    ``unchanged`` (a raise stays within the policy's ceiling, which the patch cannot move).
    """
    before = [getattr(old.resources, f) for f in RESOURCE_FIELDS]
    after = [getattr(new.resources, f) for f in RESOURCE_FIELDS]
    lowered = any(b < a for a, b in zip(before, after, strict=True))
    raised = any(b > a for a, b in zip(before, after, strict=True))
    return {
        "permission_scope": "unchanged",
        "network_domains": "unchanged",
        "write_paths": "unchanged",
        "resource_ceiling": "narrowed" if lowered and not raised else "unchanged",
    }


def same_changes(a: list[PatchChange], b: list[PatchChange]) -> bool:
    """Whether two patches set the same fields to the same values (an identical retry)."""
    def key(changes: list[PatchChange]) -> list[tuple[str, str]]:
        return sorted((c.field, canonical_json(c.new_value)) for c in changes)
    return key(a) == key(b)
