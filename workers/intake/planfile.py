"""Turning a plan file on disk into a validated, self-contained ResearchInput.

Everything that can be wrong with a plan is found here, before anything starts: unreadable,
oversize or deeply nested file, invalid UTF-8 or JSON, schema violations (named by task and
field), duplicate ids, unknown dependencies, cycles, job scripts or inputs outside the plan's
folder, and plans too large for a workflow payload. Job scripts are read into the plan and
inputs fixed by checksum, so the run is reproducible and its history records exactly what ran.
Given an artifact store, each input is put there as it is hashed: the sandbox takes inputs
from the store by that checksum only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError

from workers.intake.jsonfile import JsonFileError, read_json
from workers.intake.priority import with_priorities
from workflows.branching.explore import check_explore
from workflows.common.validation import field_path
from workflows.constants import digest
from workflows.contracts.plan import Decision, InputFile, Plan, PlanError, check_graph
from workflows.contracts.policy import Queues, RunPolicy
from workflows.contracts.resources import with_gpu_hours
from workflows.contracts.results import ResearchInput, SuppliedPlan

if TYPE_CHECKING:
    from activities.artifacts.store import ArtifactStore

FILE_FACTOR = 4
PLAN_FILE_NAMES = ("plan.json", "pending_actions.json")
"""The names a folder's plan file has, in the order ``assay run FOLDER`` looks for them: the
plan file is named after its folder."""
"""A plan file may be this many times the payload limit (``max_bytes``): its indentation and
spacing are not part of the run's input. Larger files are refused before they are read."""


class PlanFileError(ValueError):
    """The plan file cannot be run; the message says what, where and how to fix it."""


def load_plan(path: Path, *, max_bytes: int, policy: RunPolicy | None = None,
              queues: Queues | None = None, store: ArtifactStore | None = None) -> ResearchInput:
    """Read, validate and resolve a plan file into a workflow input.

    ``store`` receives every input (see :func:`load_supplied_plan`).
    """
    supplied = load_supplied_plan(path, max_bytes=max_bytes, store=store,
                                  environment=policy.environment if policy else None)
    req = ResearchInput(run_id="", plan_name=supplied.plan_name,
                        plan_sha256=supplied.plan_sha256, plan=supplied.plan,
                        policy=policy or RunPolicy(), queues=queues or Queues())
    _check_size(path, len(req.model_dump_json().encode()), max_bytes)
    return req


def load_supplied_plan(path: Path, *, max_bytes: int, by: str = "",
                       store: ArtifactStore | None = None,
                       environment: str | None = None) -> SuppliedPlan:
    """Read, validate and resolve a plan file for a goal run waiting for one.

    Args:
        path: the plan file.
        max_bytes: the largest resolved plan a run may take.
        by: who supplies the plan.
        store: where every input is put, so that the sandbox can take it. Without one the
            inputs are only checked and pinned: a run of the result cannot read them.
        environment: the run's environment (``--environment``), which overrides the plan's
            default for the jobs that name none.
    """
    plan = parse_plan(path, max_bytes=max_bytes)
    if environment is not None:
        plan = plan.model_copy(update={"environment": environment})
    base = path.resolve().parent
    decisions = [_resolve(decision, base, max_bytes, store, plan.environment)
                 for decision in plan.decisions]
    plan = plan.model_copy(update={"decisions": decisions})
    canonical = plan.model_dump_json(exclude_none=True).encode()
    name = plan.meeting_id or (base.name if path.name in PLAN_FILE_NAMES else path.stem)
    supplied = SuppliedPlan(plan_name=name, plan_sha256=digest(canonical), plan=plan, by=by)
    _check_size(path, len(supplied.model_dump_json().encode()), max_bytes)
    return supplied


def plan_in(folder: Path) -> Path | None:
    """The plan file of ``folder`` (``plan.json``, else ``pending_actions.json``), if any."""
    return next((folder / name for name in PLAN_FILE_NAMES if (folder / name).is_file()), None)


def _check_size(path: Path, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise PlanFileError(
            f"{path}: the resolved plan is {size:,} bytes, over the {max_bytes:,}-byte limit "
            "for a run's input; keep data in `inputs` files rather than inline `code`, or "
            "split the plan")


def parse_plan(path: Path, *, max_bytes: int, now: datetime | None = None) -> Plan:
    """Parse and validate a plan file (schema, dependency graph, the branches it explores).

    Files over ``FILE_FACTOR`` times ``max_bytes`` are refused before they are read. A task
    without a ``priority`` gets the one its score makes (``workers.intake.priority``), with
    deadlines counted from ``now`` (default: the clock). A task whose estimate gives the
    GPU-hour formula's factors and no time gets its ``gpu_hours``
    (``workflows.contracts.resources``).
    """
    try:
        raw: Any = read_json(path, what="plan", max_bytes=FILE_FACTOR * max_bytes)
    except JsonFileError as err:
        raise PlanFileError(str(err)) from None
    _refuse_internal_fields(raw, path)
    unset = _unset_priorities(raw)
    try:
        plan = Plan.model_validate(raw)
    except ValidationError as err:
        raise PlanFileError(f"{path}: {describe_errors(err, raw)}") from err
    try:
        check_graph(plan)
        plan = with_priorities(plan, unset, now=now or datetime.now(UTC))
        plan = plan.model_copy(update={"decisions": [
            d.model_copy(update={"estimated_resources": with_gpu_hours(d.estimated_resources)})
            for d in plan.decisions]})
        check_explore(plan, check_graph(plan))
    except PlanError as err:
        raise PlanFileError(f"{path}: {err}") from err
    return plan


def _unset_priorities(raw: Any) -> set[str]:
    """Task ids without a ``priority``, each given ``LOW`` until it is scored."""
    unset: set[str] = set()
    for item in _dicts(_field(raw, "decisions")):
        if "priority" not in item and isinstance(item.get("task_id"), str):
            unset.add(item["task_id"])
            item["priority"] = "LOW"
    return unset


_INTERNAL = {"resolved_inputs": "decision", "priority_score": "decision", "source": "job",
             "filename": "job"}


def _refuse_internal_fields(raw: Any, path: Path) -> None:
    """Fields Assay fills in while resolving a plan may not come from the file."""
    for index, item in enumerate(_dicts(_field(raw, "decisions"))):
        for key, owner in _INTERNAL.items():
            holder = item if owner == "decision" else _field(item, "job")
            if isinstance(holder, dict) and key in holder:
                raise PlanFileError(
                    f"{path}: task {_task_label(raw, index)} (decisions[{index}]), field "
                    f"{'job.' if owner == 'job' else ''}{key}: set by Assay when the plan is "
                    "resolved; remove it from the plan file")


def _field(value: Any, key: str) -> Any:
    return cast("dict[str, Any]", value).get(key) if isinstance(value, dict) else None


def _dicts(value: Any) -> list[dict[str, Any]]:
    items = cast("list[Any]", value) if isinstance(value, list) else []
    return [cast("dict[str, Any]", item) for item in items if isinstance(item, dict)]


def describe_errors(err: ValidationError, raw: Any) -> str:
    """Schema errors as lines naming the task (by task_id where known) and the field."""
    lines: list[str] = []
    for error in err.errors()[:20]:
        loc = error["loc"]
        where = field_path(loc, whole="plan")
        if len(loc) >= 2 and loc[0] == "decisions" and isinstance(loc[1], int):
            field = field_path(loc[2:], whole="(the task itself)")
            where = f"task {_task_label(raw, loc[1])} (decisions[{loc[1]}]), field {field}"
        lines.append(f"{where}: {error['msg']}")
    more = len(err.errors()) - 20
    if more > 0:
        lines.append(f"... and {more} more")
    return "invalid plan:\n  " + "\n  ".join(lines)


def _task_label(raw: Any, index: int) -> str:
    try:
        return repr(raw["decisions"][index]["task_id"])
    except (KeyError, IndexError, TypeError):
        return f"#{index + 1}"


def _inside(base: Path, relative: str, what: str, task_id: str) -> Path:
    candidate = (base / relative).resolve()
    if not candidate.is_relative_to(base):
        raise PlanFileError(f"task {task_id}: {what} {relative!r} is outside the plan's folder "
                            f"{base}; keep job scripts and data next to the plan")
    if not candidate.is_file():
        raise PlanFileError(f"task {task_id}: {what} {relative!r} not found at {candidate}")
    return candidate


def _resolve(decision: Decision, base: Path, max_bytes: int, store: ArtifactStore | None,
             environment: str | None = None) -> Decision:
    """Read the job's script into the plan and fix the inputs by checksum.

    A job naming no environment takes the plan's ``environment``.
    """
    inputs = [_input_file(base, rel, decision.task_id, store) for rel in decision.inputs]
    names = [i.name for i in inputs]
    if len(set(names)) != len(names):
        raise PlanFileError(f"task {decision.task_id}: two inputs share a file name {names}; "
                            "inputs appear under their file names in the working directory")
    job = decision.job
    if job is not None:
        if job.entry is not None:
            script = _inside(base, job.entry, "job entry", decision.task_id)
            _check_entry_size(script, job.entry, decision.task_id, max_bytes)
            try:
                source = script.read_text(encoding="utf-8")
            except OSError as err:
                raise PlanFileError(f"task {decision.task_id}: cannot read job entry "
                                    f"{job.entry!r} ({err.strerror})") from err
            except UnicodeDecodeError as err:
                raise PlanFileError(f"task {decision.task_id}: job entry {job.entry!r} is not "
                                    "UTF-8 text") from err
            job = job.model_copy(update={"source": source, "filename": script.name})
        else:
            job = job.model_copy(update={"source": job.code, "filename": "job.py"})
        if job.environment is None and environment is not None:
            job = job.model_copy(update={"environment": environment})
    return decision.model_copy(update={"job": job, "resolved_inputs": inputs})


def _check_entry_size(script: Path, entry: str, task_id: str, max_bytes: int) -> None:
    """A job script is read into the run's input: one over its limit is refused unread."""
    try:
        size = script.stat().st_size
    except OSError as err:
        raise PlanFileError(f"task {task_id}: cannot read job entry {entry!r} "
                            f"({err.strerror})") from err
    if size > max_bytes:
        raise PlanFileError(f"task {task_id}: job entry {entry!r} is {size:,} bytes, over the "
                            f"{max_bytes:,}-byte limit for a run's input; read large data "
                            "from `inputs` files instead of embedding it in the script")


def _input_file(base: Path, relative: str, task_id: str,
                store: ArtifactStore | None) -> InputFile:
    """An input pinned by sha256 and, given a store, put there (``path`` is only a record)."""
    # Imported here: the command line needs them only once a plan names inputs.
    from activities.artifacts.store import StoreError
    from activities.common.digests import file_sha256

    path = _inside(base, relative, "input", task_id)
    try:
        if store is None:
            sha256, size = file_sha256(path), path.stat().st_size
        else:
            stored = store.put(path)
            sha256, size = stored.sha256, stored.size
    except StoreError as err:
        raise PlanFileError(f"task {task_id}: cannot store input {relative!r}: {err}") from err
    except OSError as err:
        where = (f" at {err.filename}; the artifact store (ASSAY_STORE_PATH, default "
                 "<data dir>/store) must be writable" if err.filename
                 and str(err.filename) != str(path) else "")
        raise PlanFileError(f"task {task_id}: cannot read or store input {relative!r}: "
                            f"{err.strerror}{where}") from err
    return InputFile(name=path.name, path=str(path), sha256=sha256, size=size)
