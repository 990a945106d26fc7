"""Patches as data: applying one to a job spec, and its checksum.

A patch names job-spec fields by dotted path (``args.batch_size``, ``resources.timeout_s``,
``expected_metrics``) with the value it expects to find and the value it sets, so applying it
to a job it was not made for fails instead of silently doing something else. Pure functions:
reflection applies its patches with them, and a task applies its subagent's remembered fixes
with them in workflow code (``workflows.task.subagent``).
"""

from __future__ import annotations

import hashlib
from typing import Any

from workflows.common.canonical import canonical_json
from workflows.contracts.plan import JobSpec
from workflows.contracts.reflection import Patch, PatchChange

RESOURCE_FIELDS = ("memory_mb", "timeout_s", "cpus")
LIST_FIELDS = ("expected_metrics",)


class PatchError(ValueError):
    """A patch cannot be applied to this job spec; the message says which field and why."""


def apply_patch(job: JobSpec, patch: Patch | list[PatchChange]) -> JobSpec:
    """The job spec with ``patch`` applied, validated as a whole.

    Raises:
        PatchError: a sealed patch whose checksum does not match its content, a field
            patches may not touch, a value that does not match what the patch expects to
            replace, or a result that is not a valid job spec.
    """
    if isinstance(patch, Patch) and patch.sha256 and patch.sha256 != patch_checksum(patch):
        raise PatchError(f"patch {patch.patch_id} does not match its sha256: it was changed "
                         "after reflection sealed it; ask reflection for a new one")
    changes = patch.changes if isinstance(patch, Patch) else patch
    data = job.model_dump(mode="json")
    for change in changes:
        _apply_one(data, change)
    try:
        return JobSpec.model_validate(data)
    except ValueError as err:
        raise PatchError(f"the patched job spec is invalid: {err}") from err


def field_value(job: JobSpec, field: str) -> tuple[bool, Any]:
    """Whether ``job`` has the patchable ``field`` (``args.lr``…), and its value there.

    Raises:
        PatchError: patches may not change ``field``.
    """
    data = job.model_dump(mode="json")
    target, name = _target(data, field)
    return name in target, target.get(name)


def _target(data: dict[str, Any], field: str) -> tuple[dict[str, Any], str]:
    head, _, name = field.partition(".")
    if head == "args" and name:
        return data["args"], name
    if head == "resources" and name in RESOURCE_FIELDS:
        return data["resources"], name
    if head in LIST_FIELDS and not name:
        return data, head
    raise PatchError(f"patch field {field!r} cannot be applied: patches may change "
                     "args.<name>, resources.memory_mb/timeout_s/cpus or expected_metrics")


def _apply_one(data: dict[str, Any], change: PatchChange) -> None:
    target, name = _target(data, change.field)
    current = target.get(name)
    if current != change.old_value:
        raise PatchError(f"patch expects {change.field} = {change.old_value!r} but the job has "
                         f"{current!r}; it was made for another version of the job")
    target[name] = change.new_value


def patch_checksum(patch: Patch) -> str:
    """The sha256 of the patch's canonical JSON, its own checksum left out.

    Any change to the patch changes it.
    """
    text = canonical_json(patch.model_dump(mode="json", exclude={"sha256"}))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sealed(patch: Patch) -> Patch:
    """The patch with its ``sha256`` filled in."""
    return patch.model_copy(update={"sha256": patch_checksum(patch)})
