"""``assay study GOAL_OR_PLAN``: start a study of a goal or a plan, and optionally follow it.

Everything is checked here before anything is sent (:func:`study_input`): the target as
``assay run`` checks it, each plan of ``--plans DIR`` (named in any error), the acceptance
criteria and key metric, the cycle count against the plans given, and the size of the
study's input. ``assay study status|report STUDY`` live in ``workers.cli.studies``; the
group routes any other first word to ``start``, so ``assay study "GOAL"`` starts a study.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from typer.core import TyperGroup

from workers.cli.common import EXIT_BAD_INPUT, client_for, fail, run_async
from workers.cli.fields import InputError, parse_metric, parse_value, plain
from workers.cli.gates import GateName
from workers.settings import Settings
from workflows.common.validation import field_errors
from workflows.contracts.hypotheses import HypothesisTest
from workflows.contracts.plaintext import clip
from workflows.contracts.study import MAX_CRITERIA, MAX_CYCLES, StudyPolicy

if TYPE_CHECKING:
    from workflows.contracts.cycles import CyclePlan, StudyInput
    from workflows.contracts.policy import RunPolicy

_CRITERION = re.compile(r"^\s*([^\s<>=!]+)\s*(<=|>=|==|!=|<|>)\s*([^\s<>=!].*?)\s*$")
_ORDERED = ("<", "<=", ">", ">=")
_NUMBER_PARTS = re.compile(r"(\d+)")


class StudyGroup(TyperGroup):
    """``assay study``: a first word that names no subcommand starts a study of it."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Route ``assay study GOAL ...`` (or options first) to ``start``."""
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["start", *args]
        return super().parse_args(ctx, args)


study_app = typer.Typer(cls=StudyGroup, no_args_is_help=True, help=(
    "Studies: a goal or plan pursued in cycles. `assay study GOAL_OR_PLAN` starts one; "
    "`assay study status|report STUDY` show it."))


@dataclass
class StudyOptions:
    """``assay study``'s options as typed (checked by :func:`study_input`)."""

    by: str
    plans: list[Path] = field(default_factory=list[Path])
    cycles: int | None = None
    data: list[Path] = field(default_factory=list[Path])
    budget_usd: float | None = None
    human_gates: list[GateName] = field(default_factory=list[GateName])
    approvers: list[str] = field(default_factory=list[str])
    gate_timeout: float | None = None
    key_metric: str | None = None
    accept: list[str] = field(default_factory=list[str])
    policy_file: Path | None = None
    agents: bool | None = None
    record: Path | None = None
    replay: Path | None = None
    allow_test_selection: bool = False


@study_app.command("start")
def start(
    target: Annotated[str, typer.Argument(
        metavar="GOAL_OR_PLAN", help="A research goal in words, or a plan file (its cycle 1).")],
    plans: Annotated[list[Path] | None, typer.Option(
        help="The next cycles' plans: a plan file, or a folder of them run in name order "
             "(cycle-2.json, cycle-3.json...); repeatable, in the order given.")] = None,
    cycles: Annotated[int | None, typer.Option(
        min=1, max=MAX_CYCLES, help="Most cycles the study runs (default 10).")] = None,
    data: Annotated[list[Path] | None, typer.Option(
        "--data", help="A data file the goal is about (repeatable).")] = None,
    budget_usd: Annotated[float | None, typer.Option(
        help="Stop once the cycles have cost this many dollars.")] = None,
    human_gate: Annotated[list[GateName] | None, typer.Option(
        "--human-gate", help="Make a gate wait for a person: cycle (after each cycle), or a "
                             "run gate of every cycle (plan, step, error, result).")] = None,
    approver: Annotated[list[str] | None, typer.Option(help="Who may decide human gates.")]
    = None,
    gate_timeout: Annotated[float | None, typer.Option(
        min=1, help="Seconds a human gate, or a study waiting for a plan, waits.")] = None,
    key_metric: Annotated[str | None, typer.Option(
        help="NAME[:maximize|minimize]: the metric progress is measured on.")] = None,
    accept: Annotated[list[str] | None, typer.Option(
        help='"METRIC OP VALUE" (e.g. "auc >= 0.8"): all must hold to stop (repeatable). A '
             'metric with an interval holds only when all of it does; METRIC may name one '
             'of its numbers: "r2_gain.ci_low >= 0.01".')]
    = None,
    wait: Annotated[bool, typer.Option(help="Follow the study until it ends.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the study's ID, or with "
                                                         "--wait its result, as JSON.")]
    = False,
    again: Annotated[bool, typer.Option(help="Start another study of the same start.")]
    = False,
    policy_file: Annotated[Path | None, typer.Option("--policy", help="Run policy (JSON).")]
    = None,
    agents: Annotated[bool | None, typer.Option(
        "--agents/--no-agents", help="Use model-backed agents (default: when a key or a "
                                     "replay is configured).")] = None,
    record: Annotated[Path | None, typer.Option(
        help="Record the model exchanges to this JSONL file.")] = None,
    replay: Annotated[Path | None, typer.Option(
        help="Answer model calls only from this recording.")] = None,
    allow_test_selection: Annotated[bool, typer.Option(
        "--allow-test-selection", help="Let the key metric, and branches, be a held-out "
        "metric (test_ or a plan's held_out); the report says so.")] = False,
) -> None:
    """Start a study of a goal or a plan; with --wait, follow it cycle by cycle to the end."""
    from workers.cli.run import refuse_other_store
    from workers.intake.goalfile import GoalError
    from workers.intake.planfile import PlanFileError
    from workers.intake.runpolicy import PolicyError

    settings = Settings()
    opts = StudyOptions(by=settings.user, plans=plans or [], cycles=cycles, data=data or [],
                        budget_usd=budget_usd, human_gates=human_gate or [],
                        approvers=approver or [], gate_timeout=gate_timeout,
                        key_metric=key_metric, accept=accept or [], policy_file=policy_file,
                        agents=agents, record=record, replay=replay,
                        allow_test_selection=allow_test_selection)
    refuse_other_store(settings)
    try:
        inp = study_input(target, opts, settings)
    except (PlanFileError, PolicyError, GoalError, InputError) as err:
        fail(str(err), EXIT_BAD_INPUT)
    if note := plans_note(inp):
        typer.echo(note, err=True)
    run_async(_start(settings, inp, again=again, wait=wait, as_json=as_json))


def study_input(target: str, opts: StudyOptions, settings: Settings) -> StudyInput:
    """The study's input, every part checked; raises with a message naming what is wrong.

    Raises:
        InputError, PlanFileError, GoalError, PolicyError: what is wrong, and where.
    """
    from workers.cli.run import build_request
    from workflows.branching.selection import study_problem
    from workflows.contracts.cycles import CyclePlan, StudyInput
    from workflows.contracts.study import StudyState

    study = study_policy(opts)
    policy = run_policy(opts, settings)
    req = build_request(target, opts.data, settings, policy)
    first = [] if req.plan is None else [CyclePlan(
        plan_name=req.plan_name, plan_sha256=req.plan_sha256, plan=req.plan, by=opts.by)]
    plans = [*first, *cycle_plans(opts.plans, settings, policy, opts.by)]
    if not study.allow_test_selection and (
            held := study_problem(study.key_metric, [p.plan for p in plans], policy.branching)):
        raise InputError(held)
    if len(plans) > study.max_cycles:
        raise InputError(f"{len(plans)} plans given for at most {study.max_cycles} cycles; "
                         f"pass --cycles {len(plans)} or more, or give fewer plans")
    state = StudyState(study_id="", goal=req.goal, policy=study, first_plan=None if req.goal
                       else f"{clip(req.plan_name, 200)}@{req.plan_sha256}")
    inp = StudyInput(state=state, plans=plans, data=req.data, policy=req.policy,
                     queues=req.queues)
    size = len(inp.model_dump_json().encode())
    if size > settings.max_plan_bytes:
        raise InputError(f"the study's input (its plans, goal and data summaries) is "
                         f"{size:,} bytes, over the {settings.max_plan_bytes:,}-byte limit; "
                         "give fewer or smaller plans and supply later ones with `assay plan "
                         "STUDY FILE`")
    return inp


def study_policy(opts: StudyOptions) -> StudyPolicy:
    """When the study stops and what it steers by, from ``opts``."""
    if opts.budget_usd is not None and not (math.isfinite(opts.budget_usd)
                                            and opts.budget_usd > 0):
        raise InputError(f"--budget-usd {opts.budget_usd}: give a positive number of dollars "
                         "such as 2.50")
    if len(opts.accept) > MAX_CRITERIA:
        raise InputError(f"{len(opts.accept)} --accept given; at most {MAX_CRITERIA}")
    values: dict[str, Any] = {
        "acceptance": [parse_criterion(text) for text in opts.accept],
        "key_metric": parse_metric(opts.key_metric, "--key-metric") if opts.key_metric
        else None, "budget_usd": opts.budget_usd,
        "allow_test_selection": opts.allow_test_selection}
    if opts.cycles is not None:
        values["max_cycles"] = opts.cycles
    try:
        return StudyPolicy.model_validate(values)
    except ValidationError as err:
        raise InputError("invalid study: " + "; ".join(
            map(str, field_errors(err, plain=True)))) from None


def parse_criterion(text: str) -> HypothesisTest:
    """``METRIC OP VALUE`` (``auc >= 0.8``) as a metric test."""
    plain(text, "--accept")
    found = _CRITERION.match(text) if len(text) <= 400 else None
    if found is None:
        raise InputError(f"--accept {text[:80]!r}: write METRIC OP VALUE, e.g. \"auc >= 0.8\", "
                         "with OP one of <, <=, >, >=, ==, !=")
    metric, op, raw = found.groups()
    value = parse_value(raw, f"--accept {metric}")
    if op in _ORDERED and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise InputError(f"--accept {text[:80]!r}: {op} compares numbers; give a number")
    try:
        return HypothesisTest.model_validate({"metric": metric, "op": op, "threshold": value})
    except ValidationError as err:
        raise InputError(f"--accept {text[:80]!r}: " + "; ".join(
            map(str, field_errors(err, plain=True)))) from None


def run_policy(opts: StudyOptions, settings: Settings) -> RunPolicy:
    """Each cycle's run policy; ``--gate-timeout`` also bounds a wait for a person's plan."""
    from workers.intake.runpolicy import AgentFlags, build_policy

    policy = build_policy(settings, policy_file=opts.policy_file,
                          human_gates=[g.kind for g in opts.human_gates],
                          approvers=opts.approvers or None, gate_timeout_s=opts.gate_timeout,
                          agents=AgentFlags(enabled=opts.agents, record=opts.record,
                                            replay=opts.replay),
                          known_environments=settings.environments().catalog.names())
    if opts.gate_timeout is not None:
        policy.gates.cycle.timeout_s = opts.gate_timeout
    policy.branching.allow_test_selection |= opts.allow_test_selection
    return policy


def cycle_plans(given: list[Path], settings: Settings, policy: RunPolicy,
                by: str) -> list[CyclePlan]:
    """The plans of ``--plans``, in the order given.

    Each is a plan file, or a folder of them in name order (numbers compare as numbers).
    """
    from workers.intake.planfile import load_supplied_plan
    from workflows.contracts.cycles import CyclePlan

    files: list[Path] = []
    for folder in given:
        if folder.is_file():
            files.append(folder)
            continue
        if not folder.is_dir():
            raise InputError(f"--plans {folder}: no such file or folder; give a plan file or "
                             "a folder of them (cycle-2.json, cycle-3.json...)")
        found = sorted((p for p in folder.iterdir() if p.suffix == ".json" and p.is_file()),
                       key=_name_order)
        if not found:
            raise InputError(f"--plans {folder}: the folder has no .json plan files")
        files += found
    if len(files) > MAX_CYCLES:
        raise InputError(f"--plans: {len(files)} plan files; a study runs at most "
                         f"{MAX_CYCLES} cycles")
    store = settings.artifact_store()
    plans: list[CyclePlan] = []
    for path in files:
        supplied = load_supplied_plan(path, max_bytes=settings.max_plan_bytes, by=by,
                                      store=store, environment=policy.environment)
        plans.append(CyclePlan(plan_name=supplied.plan_name, plan_sha256=supplied.plan_sha256,
                               plan=supplied.plan, by=by))
    return plans


def _name_order(path: Path) -> list[tuple[int, int | str]]:
    """A file name's sort key: ``cycle-2`` before ``cycle-10``."""
    return [(0, int(part)) if part.isdigit() else (1, part)
            for part in _NUMBER_PARTS.split(path.name) if part]


def plans_note(inp: StudyInput) -> str:
    """What the study does once its plans run out, when nothing can plan ("" if planned)."""
    state, planned = inp.state, inp.policy.agents.enabled and inp.state.goal is not None
    if planned or len(inp.plans) >= state.policy.max_cycles:
        return ""
    wait = f"{inp.policy.gates.cycle.timeout_s:g} s"
    given = f"after its {len(inp.plans)} plan(s) " if inp.plans else ""
    why = "a plan study is never planned by a model" if state.goal is None else \
        "no model is configured (or --no-agents)"
    return (f"note: {why}, so {given}the study waits up to {wait} for each next cycle's "
            "plan: give it with `assay plan STUDY PLAN.json`")


async def _start(settings: Settings, inp: StudyInput, *, again: bool, wait: bool,
                 as_json: bool) -> None:
    from workers.cli.studies import follow_study, study_client
    from workers.cli.studies import outcome as show_outcome

    studies = study_client(await client_for(settings))
    study_id = await studies.start_study(inp, again=again)
    typer.echo(f"started {study_id}", err=True)
    if not wait:
        typer.echo(json.dumps({"study_id": study_id}) if as_json else study_id)
        typer.echo(f"follow it with: assay study status {study_id}", err=True)
        return
    result = await follow_study(studies, study_id, echo=lambda line: typer.echo(line, err=True))
    raise typer.Exit(show_outcome(result, as_json=as_json))


from workers.cli.studies import report as _report  # noqa: E402  (``assay study report``)
from workers.cli.studies import status as _status  # noqa: E402  (``assay study status``)

study_app.command("status")(_status)
study_app.command("report")(_report)
