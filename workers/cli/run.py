"""``assay run``: start a run of a plan file or of a research goal, and optionally follow it."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from workers.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_STOPPED,
    client_for,
    fail,
    outcome_exit,
    run_async,
)
from workers.cli.gates import GateName
from workers.intake.runpolicy import AgentFlags, NoModelAction
from workers.settings import Settings
from workflows.contracts.policy import Tiering, TimeoutAction

RUN_GATES = ", ".join(g.value for g in GateName if g is not GateName.CYCLE)
"""The gates a run has, as ``--human-gate`` takes them (the cycle gate is a study's)."""
HUMAN_GATE_HELP = (f"Make a gate ({RUN_GATES}) wait for a person (repeatable); a study's "
                   f"{GateName.CYCLE.value} gate is set by `assay study`.")

if TYPE_CHECKING:
    from client.assay import AssayClient
    from workflows.contracts.policy import AgentsPolicy, RunPolicy
    from workflows.contracts.results import ResearchInput, ResearchResult


def run(
    target: Annotated[str, typer.Argument(
        metavar="PLAN_OR_GOAL",
        help="A plan file (plan.json or pending_actions.json), a folder holding one, or a "
             "research goal in words.")],
    wait: Annotated[bool, typer.Option(help="Wait for the run to finish.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results JSON.")] = False,
    again: Annotated[bool, typer.Option(help="Start another run of a plan already run.")] = False,
    max_parallel: Annotated[int | None, typer.Option(min=1, max=64)] = None,
    policy_file: Annotated[Path | None, typer.Option("--policy", help="Run policy (JSON).")]
    = None,
    human_gate: Annotated[list[GateName] | None, typer.Option(
        "--human-gate", help=HUMAN_GATE_HELP)]
    = None,
    approver: Annotated[list[str] | None, typer.Option(help="Who may decide human gates.")]
    = None,
    gate_timeout: Annotated[float | None, typer.Option(min=1, help="Seconds a gate waits.")]
    = None,
    on_timeout: Annotated[TimeoutAction | None, typer.Option(help="approve or reject.")]
    = None,
    data: Annotated[list[Path] | None, typer.Option(
        "--data", help="A data file the goal is about (repeatable).")] = None,
    answer_format: Annotated[str | None, typer.Option(
        help="The form a goal's answer must take, as @name[description] fields (e.g. "
             "'@mean_age[mean_age], rounded to two decimal places').")] = None,
    agents: Annotated[bool | None, typer.Option(
        "--agents/--no-agents",
        help="Use model-backed agents (default: when a key or a replay is configured).")]
    = None,
    record: Annotated[Path | None, typer.Option(
        help="Record the run's model exchanges to this JSONL file.")] = None,
    replay: Annotated[Path | None, typer.Option(
        help="Answer model calls only from this recording (no key or network).")] = None,
    budget_tokens: Annotated[int | None, typer.Option(
        min=0, help="Stop asking models once the run has spent this many tokens.")] = None,
    budget_usd: Annotated[float | None, typer.Option(
        min=0, help="Stop asking models once the run has spent this many dollars.")] = None,
    no_model: Annotated[NoModelAction | None, typer.Option(
        help="A goal no model can plan: wait for `assay plan`, or end deferred.")] = None,
    no_model_review: Annotated[bool, typer.Option(
        "--no-model-review", help="Deterministic reviewers only.")] = False,
    no_debuggers: Annotated[bool, typer.Option(
        "--no-debuggers", help="No model debuggers after a failed job.")] = False,
    plan_review_rounds: Annotated[int | None, typer.Option(
        min=0, max=5, help="Planner/plan-reviewer rounds for a goal.")] = None,
    tiering: Annotated[Tiering | None, typer.Option(
        help="Light or full tasks: by their label and the rules (auto), or every task one "
             "tier (default: ASSAY_TIERING, auto).")] = None,
    memory: Annotated[bool | None, typer.Option(
        help="Use reflection memory: semantic rules and templates at intake, episodes kept "
             "after each task (default: ASSAY_MEMORY_ENABLED, on).")] = None,
    skills: Annotated[bool | None, typer.Option(
        help="Use the skill library: a confident match supplies the plan or a job with no "
             "planning call; finished tasks feed extraction (default: ASSAY_SKILLS_ENABLED, "
             "on).")] = None,
    environment: Annotated[str | None, typer.Option(
        help="The job environment (e.g. science) of every job that names none, the coder's "
             "included; for a plan, it overrides the plan's `environment`.")] = None,
    allow_test_selection: Annotated[bool, typer.Option(
        "--allow-test-selection", help="Let branches be compared on a held-out metric (test_ "
        "or the plan's held_out); the report says so.")] = False,
) -> None:
    """Start a run of a plan file or of a research goal; with --wait, follow it to the end."""
    from workers.intake.goalfile import GoalError
    from workers.intake.planfile import PlanFileError
    from workers.intake.runpolicy import PolicyError, build_policy
    from workflows.branching.selection import plan_problem

    settings = Settings()
    if GateName.CYCLE in (human_gate or []):
        fail("--human-gate cycle: the cycle gate is a study's; start one with `assay study`",
             EXIT_BAD_INPUT)
    flags = AgentFlags(enabled=agents, record=record, replay=replay,
                       budget_tokens=budget_tokens, budget_usd=budget_usd,
                       no_model=no_model,
                       model_review=False if no_model_review else None,
                       debuggers=False if no_debuggers else None,
                       plan_review_rounds=plan_review_rounds)
    known = settings.environments().catalog.names()
    refuse_other_store(settings)
    try:
        policy = build_policy(settings, policy_file=policy_file, max_parallel=max_parallel,
                              human_gates=[g.kind for g in human_gate or []],
                              approvers=approver, gate_timeout_s=gate_timeout,
                              on_timeout=on_timeout,
                              agents=flags, memory=memory, skills=skills,
                              environment=environment,
                              known_environments=known)
        if allow_test_selection:
            policy.branching.allow_test_selection = True
        if tiering is not None:
            policy.tiering = tiering
        req = build_request(target, data or [], settings, policy, answer_format=answer_format)
    except (PlanFileError, PolicyError, GoalError) as err:
        fail(str(err), EXIT_BAD_INPUT)
    if held := plan_problem(req.plan, req.policy.branching):
        fail(held, EXIT_BAD_INPUT)
    if note := unknown_environments_note(req, known):
        typer.echo(note, err=True)
    if req.plan is None and not req.policy.agents.enabled:
        typer.echo(no_model_note(req.policy.agents, switched_off=agents is False), err=True)
    run_async(_start(settings, req, again=again, wait=wait, as_json=as_json))


def refuse_other_store(settings: Settings) -> None:
    """Exit 2 before any input is stored when the stack that answers reads another store."""
    import asyncio

    from workers.connection.identity import StoreMismatchError
    from workers.connection.identity import refuse_other_store as check

    try:
        asyncio.run(check(settings))
    except StoreMismatchError as err:
        fail(str(err), EXIT_BAD_INPUT)


def build_request(target: str, data: list[Path], settings: Settings,
                  policy: RunPolicy, *, answer_format: str | None = None) -> ResearchInput:
    """The run's input: a resolved plan file (or a folder's), or a goal with its data files.

    Inputs and data files are put in the artifact store, where the sandbox takes them from.
    A run that names no job environment gets the operator's default (``job_environment``).
    """
    from workers.intake.goalfile import GoalError, is_directory, is_plan_target, load_goal
    from workers.intake.jobenvironment import with_job_environment
    from workers.intake.planfile import PLAN_FILE_NAMES, load_plan, plan_in
    from workers.intake.runpolicy import queues_from

    queues = queues_from(settings)
    store = settings.artifact_store()
    plan_file = Path(target) if is_plan_target(target) else None
    if plan_file is None and is_directory(target):
        plan_file = plan_in(Path(target))
        if plan_file is None:
            raise GoalError(f"{target}: is a directory with no plan file in it (one of "
                            f"{' or '.join(PLAN_FILE_NAMES)}); pass a plan file or a goal "
                            "in words")
    if plan_file is not None:
        if data:
            raise GoalError("--data goes with a goal in words; a plan file names the data "
                            "each task reads in its `inputs`")
        if answer_format:
            raise GoalError("--answer-format goes with a goal in words; a plan's tasks "
                            "name their metrics in `checks`")
        req = load_plan(plan_file, max_bytes=settings.max_plan_bytes, policy=policy,
                        queues=queues, store=store)
    else:
        req = load_goal(target, data, max_bytes=settings.max_plan_bytes, policy=policy,
                        queues=queues, store=store, answer_format=answer_format)
    return with_job_environment(req, settings.job_environment,
                                settings.environments().catalog.names())


def unknown_environments_note(req: ResearchInput, known: Collection[str]) -> str:
    """A note naming the plan's environments this machine does not define ("" if none).

    Only a note: the sandbox pool's operator may define sets this machine does not know, and
    the pool refuses an unknown one when the task prepares it, with the reason.
    """
    named = {d.job.environment for d in (req.plan.decisions if req.plan else [])
             if d.job is not None and d.job.environment}
    unknown = sorted(named - set(known))
    if not unknown:
        return ""
    return (f"note: the plan names environment(s) {', '.join(unknown)}, which this machine does "
            f"not define (known: {', '.join(sorted(known)) or 'none'}); unless the sandbox "
            "pool's operator defines them, those tasks will fail when their environment is "
            "prepared")


def no_model_note(agents: AgentsPolicy, *, switched_off: bool) -> str:
    """What a goal run does when it cannot ask a model, in words."""
    why = ("model-backed agents are switched off (--no-agents)" if switched_off else
           "no model is configured (no ASSAY_ANTHROPIC_API_KEY or ANTHROPIC_API_KEY, and no "
           "--replay recording)")
    if agents.no_model == "wait":
        then = ("the run will wait for a person's plan: give it one with "
                "`assay plan RUN PLAN.json`")
    else:
        then = ("unless a skill in the library matches the goal, the run will end `deferred` "
                "without planning; pass --no-model wait to have it wait for `assay plan RUN "
                "PLAN.json` instead")
    return f"note: {why}, so nothing can plan this goal; {then}."


async def _start(settings: Settings, req: ResearchInput, *, again: bool, wait: bool,
                 as_json: bool) -> None:
    from client.assay import RunExistsError
    from workers.cli.show import replays

    client = await client_for(settings)
    try:
        run_id = await client.start_run(req, again=again)
    except RunExistsError as err:
        fail(f"{err.existing}; pass --again to start another run of it")
    typer.echo(f"started {run_id}", err=True)
    if not wait:
        typer.echo(run_id)
        typer.echo(f"follow it with: assay watch {run_id}", err=True)
        return
    result = await _follow(client, run_id)
    _print_result(settings, result, as_json=as_json, replayed=replays(req.policy))
    raise typer.Exit(outcome_exit(result.status))


async def _follow(client: AssayClient, run_id: str) -> ResearchResult:
    """The run's result, its progress shown meanwhile.

    A run stopped without a result (cancelled, terminated, timed out) exits
    :data:`EXIT_STOPPED`.
    """
    import sys

    from temporalio.client import WorkflowFailureError
    from temporalio.exceptions import CancelledError, TerminatedError, TimeoutError

    from workers.cli.progress import follow

    console = None
    if sys.stderr.isatty():
        from rich.console import Console

        console = Console(stderr=True)
    try:
        return await follow(client, run_id, console=console,
                            echo=lambda line: typer.echo(line, err=True))
    except WorkflowFailureError as err:
        if isinstance(err.cause, CancelledError | TerminatedError | TimeoutError):
            summary = await client.describe_run(run_id)  # the reason from its closing event
            fail(f"run {run_id} was {summary.stopped_text()}", EXIT_STOPPED)
        raise


def _print_result(settings: Settings, result: ResearchResult, *, as_json: bool,
                  replayed: bool) -> None:
    from workers.cli.show import load_report, outcome_lines

    report = load_report(result, settings.artifact_store())  # every task's detail, uncut
    if as_json:  # the results JSON its report wrote, else the result
        if report is None:
            typer.echo("the results JSON cannot be read here; printing the run's result "
                       "(each task's status and reason)", err=True)
        typer.echo((report or result).model_dump_json(indent=2))
        return
    web_ui = (f"http://127.0.0.1:{settings.temporal_ui_port}/namespaces/"
              f"{settings.temporal_namespace}")
    reasons = {t.task_id: t.status_reason for t in report.tasks} if report else None
    for line in outcome_lines(result, web_ui, reasons=reasons, replayed=replayed):
        typer.echo(line)
