"""``assay branch``: start branches of a run from a task's checkpoint, one or a sweep.

The request is built and checked here (:func:`branch_request`) before anything is sent; the
run checks it again (who, what, where) and refuses what its policy does not allow. A closed
run takes no branch, so the client starts a new run linked to it, and this says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError

from workers.cli.common import EXIT_BAD_INPUT, ByOption, client_for, fail, print_table, run_async
from workers.cli.fields import (
    InputError,
    check_name,
    name_of,
    parse_checkpoint,
    parse_metric,
    parse_sets,
    parse_sweep,
    plain,
    read_code,
    unique,
    value_name,
)
from workers.settings import Settings
from workflows.branching.selection import held_out_problem
from workflows.common.validation import field_errors
from workflows.contracts.base import Scalar
from workflows.contracts.branches import CHECKPOINT_CHARS, BranchRequest, CheckpointPhase
from workflows.contracts.words import plural

if TYPE_CHECKING:
    from client.steering import SteeringClient


class KindName(StrEnum):
    """Branch kinds, as the command line spells them."""

    RECOVERY = "recovery"
    OPTIMISATION = "optimisation"
    HYPOTHESIS = "hypothesis"
    HUMAN = "human"


class SelectName(StrEnum):
    """How a finished set of branches is decided, as the command line spells it."""

    BEST = "best"
    KEEP_ALL = "keep_all"
    PERSON = "person"


@dataclass
class BranchOptions:
    """``assay branch``'s options as typed (checked by :func:`branch_request`)."""

    start: str | None
    by: str
    sets: list[str] = field(default_factory=list[str])
    sweep: str | None = None
    name: str | None = None
    kind: str = "human"
    hypothesis: str = ""
    code: Path | None = None
    metric: str | None = None
    select: str | None = None
    comment: str = ""
    allow_test_selection: bool = False
    checkpoint: str | None = None
    """A named checkpoint of the run to start from (``--from-checkpoint``)."""


def branch_request(opts: BranchOptions, taken: Collection[str] = (),
                   point: tuple[str, CheckpointPhase] | None = None) -> BranchRequest:
    """The request ``opts`` ask for; default names avoid ``taken`` (the run's branches).

    ``point`` is the branch point of ``opts.checkpoint`` when ``--from`` gives none.

    Raises:
        InputError: an option is malformed, hostile or too large; the message says which.
    """
    if opts.checkpoint is not None:
        check_checkpoint(opts.checkpoint)
    if opts.start is not None:
        task, phase = parse_checkpoint(opts.start)
    elif point is not None:
        task, phase = point
    else:
        raise InputError("say where to branch from: --from TASK[:phase] or --from-checkpoint "
                         "NAME")
    sets = parse_sets(opts.sets)
    code = read_code(opts.code) if opts.code is not None else None
    plain(opts.by, "--by")
    plain(opts.hypothesis, "--hypothesis", lines=True)
    plain(opts.comment, "--comment", lines=True)
    metric = parse_metric(opts.metric) if opts.metric else None
    if not opts.allow_test_selection and (held := held_out_problem(metric, (), "branch selection")):
        raise InputError(held)
    variants = _variants(opts, sets)
    spec = {"kind": opts.kind, "hypothesis": opts.hypothesis, "code": code}
    names = _names(opts, variants, taken)
    try:
        return BranchRequest.model_validate({
            "from_task": task, "from_phase": phase, "by": opts.by, "comment": opts.comment,
            "metric": metric, "selection": opts.select, "channel": "cli",
            "allow_test_selection": opts.allow_test_selection,
            "from_checkpoint": opts.checkpoint,
            "branches": [{**spec, "name": name, "set": changes}
                         for name, (_, changes) in zip(names, variants, strict=True)]})
    except ValidationError as err:
        raise InputError("; ".join(map(str, field_errors(err, whole="request", most=3,
                                                         plain=True)))) from None


def _variants(opts: BranchOptions, sets: dict[str, Scalar]
              ) -> list[tuple[str, dict[str, Scalar]]]:
    """Each branch's default name and changes: one per swept value, or one with ``sets``."""
    if opts.sweep is None:
        named = [value_name(f, json.dumps(v) if not isinstance(v, str) else v)
                 for f, v in sets.items()]
        return [(name_of(*named) if named else "", sets)]
    swept, values = parse_sweep(opts.sweep)
    if swept in sets:
        raise InputError(f"{swept} is both swept and set; give it once")
    return [(value_name(swept, text, opts.name or ""), {**sets, swept: value})
            for text, value in values]


def _names(opts: BranchOptions, variants: list[tuple[str, dict[str, Scalar]]],
           taken: Collection[str]) -> list[str]:
    """The branches' names: the one given, or each default made unique (``branch-N``)."""
    if opts.name is not None and opts.sweep is None:
        return [check_name(opts.name)]
    if opts.name is not None:
        check_name(opts.name)  # a sweep's names start with it
    if len(variants) == 1 and not variants[0][0]:  # no sets to name it by
        return [next(f"branch-{n}" for n in range(1, len(taken) + 2)
                     if f"branch-{n}" not in taken)]
    return unique([name for name, _ in variants], set(taken))


def check_checkpoint(name: str) -> str:
    """A checkpoint name as ``--from-checkpoint`` gives it, refused if malformed."""
    plain(name, "--from-checkpoint")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:-]*", name) or len(name) > CHECKPOINT_CHARS:
        raise InputError(f"--from-checkpoint {name[:80]!r}: a checkpoint name is 1 to "
                         f"{CHECKPOINT_CHARS} letters, digits, '_', '.', ':' or '-' "
                         "(`assay checkpoints RUN` lists the run's)")
    return name


async def _point(steering: SteeringClient, run_id: str, name: str
                 ) -> tuple[str, CheckpointPhase]:
    """The branch point checkpoint ``name`` of ``run_id`` stands for.

    Raises:
        InputError: the run has no such checkpoint (the known ones said), or it stands for
            no task.
    """
    from client.steering import BranchRefusedError

    try:
        point = await steering.checkpoint_named(run_id, name)
    except BranchRefusedError as err:
        raise InputError(str(err)) from None
    if point.from_task is None:
        raise InputError(f"checkpoint {name!r} stands for no task (every task had finished, "
                         "or none was planned): give --from TASK[:phase] too")
    return point.from_task, point.from_phase


async def _taken(steering: SteeringClient, run_id: str) -> set[str]:
    """The names an open run's branches have (none known if it cannot answer)."""
    from temporalio.client import WorkflowQueryFailedError

    try:
        return {b.name for b in (await steering.branches(run_id)).branches}
    except WorkflowQueryFailedError:  # a run older than branches: the run checks names
        return set()


def branch(
    run_id: Annotated[str, typer.Argument(help="The run to branch.")],
    start: Annotated[str | None, typer.Option(
        "--from", help="The checkpoint: TASK, TASK:planned, TASK:execute or TASK:verify.")]
    = None,
    checkpoint: Annotated[str | None, typer.Option(
        "--from-checkpoint", help="A named checkpoint of the run (`assay checkpoints RUN`): "
        "the tasks it reuses as they were then; its branch point unless --from says.")]
    = None,
    sets: Annotated[list[str] | None, typer.Option(
        "--set", help="FIELD=VALUE: args.X, resources.memory_mb|timeout_s|cpus or "
                      "TASK:args.X; repeat for more.")] = None,
    sweep: Annotated[str | None, typer.Option(
        "--sweep", help="FIELD=V1,V2,...: one branch per value.")] = None,
    name: Annotated[str | None, typer.Option("--name", help="The branch's name (a sweep's "
                                             "prefix).")] = None,
    kind: Annotated[KindName, typer.Option("--kind")] = KindName.HUMAN,
    hypothesis: Annotated[str, typer.Option("--hypothesis", help="What the branch tests.")]
    = "",
    code: Annotated[Path | None, typer.Option("--code", help="A file of job code for the "
                                              "branch-point task.")] = None,
    metric: Annotated[str | None, typer.Option(
        "--metric", help="NAME[:maximize|minimize]: what to compare on.")] = None,
    select: Annotated[SelectName | None, typer.Option(
        "--select", help="best, keep_all or person (default: the run's policy).")] = None,
    allow_test_selection: Annotated[bool, typer.Option(
        "--allow-test-selection", help="Compare on a held-out metric (test_ or the plan's "
        "held_out) all the same; the report says so.")] = False,
    by: ByOption = None,
    comment: Annotated[str, typer.Option("--comment", "-m")] = "",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Start branches of a run from a task's checkpoint (a closed run: a new linked run)."""
    from client.steering import BranchRefusedError, SteeringClient

    settings = Settings()
    opts = BranchOptions(start=start, by=by or settings.user, sets=sets or [], sweep=sweep,
                         name=name, kind=kind.value, hypothesis=hypothesis, code=code,
                         metric=metric, select=select.value if select else None,
                         comment=comment, allow_test_selection=allow_test_selection,
                         checkpoint=checkpoint)
    try:
        placeholder = ("1", "planned") if start is None and checkpoint is not None else None
        request = branch_request(opts, point=placeholder)  # checked before anything is sent
    except InputError as err:
        fail(str(err), EXIT_BAD_INPUT)

    async def go() -> None:
        steering = SteeringClient(await client_for(settings))
        wanted = request
        try:
            point = (await _point(steering, run_id, checkpoint)
                     if checkpoint is not None and start is None else None)
            if point is not None or (name is None
                                     and await steering.assay.status(run_id) == "running"):
                wanted = branch_request(opts, await _taken(steering, run_id), point)
        except InputError as err:
            fail(str(err), EXIT_BAD_INPUT)
        try:
            started = await steering.branch(run_id, wanted)
        except BranchRefusedError as err:
            fail(f"refused: {err}", EXIT_BAD_INPUT)
        if as_json:
            typer.echo(json.dumps({
                "run_id": started.run_id, "linked_from": started.linked_from or None,
                "branches": [{"name": n, "workflow_id": w} for n, w in
                             zip(started.names, started.workflow_ids, strict=True)]}, indent=2))
            return
        if started.linked_from:
            typer.echo(f"run {run_id} is closed, so a new run linked to it was started: "
                       f"{started.run_id} (it reuses the tasks of {run_id} and runs only "
                       "these branches)")
        else:
            typer.echo(f"started {plural(len(started.names), 'branch', 'branches')} of run "
                       f"{run_id} from task {wanted.from_task} ({wanted.from_phase})")
        print_table(["BRANCH", "WORKFLOW"], list(zip(started.names, started.workflow_ids,
                                                     strict=True)))
        typer.echo(f"follow them with `assay branches {started.run_id}`")

    run_async(go())
