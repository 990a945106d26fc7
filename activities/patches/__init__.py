"""Patches: guarded, checksummed diffs of a job spec, shared by reflection and memory.

``apply`` applies a patch's changes to a job spec and seals it with a checksum; the guard
(``workflows.common.guard``, pure, so workflows check branches and gate modifications with
it too) refuses any patch that widens permissions, paths, network or resource ceilings, or
repeats an identical retry.
"""


from activities.patches.apply import PatchError, apply_patch
from workflows.common.guard import check_patch

__all__ = [
    "PatchError",
    "apply_patch",
    "check_patch",
]
