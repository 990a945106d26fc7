"""A branch's modifications, applied to the jobs they target and held to the guardrails.

``set`` keys name a field of the branch-point job (``args.lr``, ``resources.timeout_s``) or of
a downstream task's job (``4:args.epochs``); ``code`` replaces the branch-point job's code. A
change that cannot apply (a task outside the branch, a job with no such resource, a task with
no job yet) or breaks a guardrail (``workflows.common.guard.check_change``) is refused with a
reason, before anything starts. Deterministic, pure code.
"""

from __future__ import annotations

from typing import Any

from workflows.common.guard import check_change
from workflows.constants import digest
from workflows.contracts.base import Scalar
from workflows.contracts.branches import BranchChange
from workflows.contracts.plan import JobSpec, Resources
from workflows.contracts.policy import ReviewPolicy

BRANCH_FILENAME = "branch_{name}.py"
"""The file a person's code for a branch runs as."""


class ChangeRefusedError(ValueError):
    """A modification that cannot apply, or breaks a guardrail; the message says which."""


def split_path(path: str, default_task: str) -> tuple[str, str]:
    """``("4", "args.epochs")`` for ``4:args.epochs``; the default task for ``args.lr``."""
    task, _, field = path.rpartition(":")
    return (task or default_task), field


def by_task(sets: dict[str, Scalar], default_task: str) -> dict[str, dict[str, Scalar]]:
    """A branch's ``set`` grouped by the task each entry targets."""
    grouped: dict[str, dict[str, Scalar]] = {}
    for path, value in sets.items():
        task, field = split_path(path, default_task)
        grouped.setdefault(task, {})[field] = value
    return grouped


def widened(before: Scalar | None, value: Scalar) -> Scalar:
    """``value``, as a float where it is a whole number given for a float argument.

    ``--set args.delay=4`` for a ``delay`` of ``0.1`` need not be written ``4.0``; any other
    change of type is left for the guardrails to refuse.
    """
    if isinstance(before, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def apply_sets(job: JobSpec, sets: dict[str, Scalar], task_id: str
               ) -> tuple[JobSpec, list[BranchChange]]:
    """``job`` with ``sets`` (fields without a task prefix) applied, and what changed.

    Raises:
        ChangeRefusedError: a resource given a value of the wrong kind or out of range.
    """
    args: dict[str, Scalar] = dict(job.args)
    resources: dict[str, Any] = job.resources.model_dump()
    changes: list[BranchChange] = []
    for field, value in sets.items():
        group, _, name = field.partition(".")
        if group == "args":
            value = widened(args.get(name), value)
            changes.append(BranchChange(task_id=task_id, field=field, old=args.get(name),
                                        new=value))
            args[name] = value
        else:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ChangeRefusedError(f"task {task_id}: {field} must be a number, "
                                         f"not {value!r}")
            changes.append(BranchChange(task_id=task_id, field=field, old=resources[name],
                                        new=value))
            resources[name] = value
    try:
        changed = job.model_copy(update={"args": args,
                                         "resources": Resources.model_validate(resources)})
    except ValueError as err:
        raise ChangeRefusedError(f"task {task_id}: {_first_line(err)}") from None
    return changed, changes


def with_code(job: JobSpec, code: str, name: str) -> tuple[JobSpec, BranchChange]:
    """``job`` running a person's ``code`` instead of its own (reviewed like any job)."""
    filename = BRANCH_FILENAME.format(name=name)
    changed = job.model_copy(update={"entry": None, "code": code, "source": code,
                                     "filename": filename})
    change = BranchChange(task_id="", field="code", old=job.filename,
                          new=f"{filename} (sha256 {digest(code.encode())[:12]})")
    return changed, change


def modified(job: JobSpec | None, sets: dict[str, Scalar], code: str | None, *, task_id: str,
             name: str, policy: ReviewPolicy) -> tuple[JobSpec | None, list[BranchChange]]:
    """``job`` with a branch's changes for ``task_id`` applied and checked.

    Raises:
        ChangeRefusedError: the task has no job to change, a value cannot apply, or the
            changed job breaks a guardrail.
    """
    if not sets and code is None:
        return job, []
    if job is None:
        raise ChangeRefusedError(
            f"task {task_id} has no job to change here (the coder writes it when the task "
            "runs): branch from its execute checkpoint, after it ran, to change its job")
    changed, changes = apply_sets(job, sets, task_id)
    if code is not None:
        changed, change = with_code(changed, code, name)
        changes.append(change.model_copy(update={"task_id": task_id}))
    violations = check_change(job, changed, policy, code=code is not None)
    if violations:
        raise ChangeRefusedError(f"task {task_id}: {'; '.join(violations)}")
    return changed, changes


def _first_line(err: ValueError) -> str:
    text = str(err).strip().splitlines()
    return " ".join(text[:3]) if text else type(err).__name__
