"""``assay approve`` and ``assay gates``: people decide human gates from the command line."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated

import typer
from pydantic import ValidationError

from workers.cli.common import EXIT_BAD_INPUT, client_for, fail, run_async
from workers.cli.fields import InputError, parse_sets, plain
from workers.settings import Settings
from workflows.common.validation import field_errors
from workflows.contracts.gates import GateDecision
from workflows.contracts.policy import GateKind


class GateName(StrEnum):
    """Gate kinds, as the command line spells them."""

    PLAN = "plan"
    STEP = "step"
    ERROR = "error"
    RESULT = "result"
    BRANCH = "branch"
    CYCLE = "cycle"

    @property
    def kind(self) -> GateKind:
        """The kind as the policy names it."""
        return self.value


def approve(
    run_id: Annotated[str, typer.Argument(help="The run (or study) whose gate to decide.")],
    gate: Annotated[GateName, typer.Option(
        "--gate", "-g", help="plan, step, error, result, branch, or a study's cycle.")],
    task: Annotated[str | None, typer.Option("--task", "-t", help="The task, for task gates.")]
    = None,
    reject: Annotated[bool, typer.Option("--reject", help="Reject instead of approve.")] = False,
    comment: Annotated[str, typer.Option("--comment", "-m")] = "",
    by: Annotated[str | None, typer.Option("--by", help="Who decides (default: you).")] = None,
    choose: Annotated[str | None, typer.Option(
        "--choose", help="At the branch gate: the line to keep (a branch, or main); at a "
                         "study's cycle gate: iterate, fix, stop or pivot:H instead of the "
                         "rules' decision.")] = None,
    modify: Annotated[bool, typer.Option(
        "--modify", help="At a step or error gate: change the job (--set), then go on.")]
    = False,
    sets: Annotated[list[str] | None, typer.Option(
        "--set", help="With --modify: FIELD=VALUE (args.X, resources.memory_mb|timeout_s|cpus, "
                      "TASK:args.X); repeat for more.")] = None,
    branch: Annotated[str | None, typer.Option(
        "--branch", help="The branch whose task's gate this is (default: the main line).")]
    = None,
) -> None:
    """Approve, --reject or --modify a gate waiting for a person; --choose at branch or cycle."""
    from client.assay import GateDecisionError

    settings = Settings()
    try:
        decision = gate_decision(DecisionOptions(
            gate=gate, task=task, by=by or settings.user, reject=reject, comment=comment,
            choose=choose, modify=modify, sets=sets or [], branch=branch))
    except ValidationError as err:
        fail("invalid decision: " + "; ".join(map(str, field_errors(err, plain=True))),
             EXIT_BAD_INPUT)
    except InputError as err:
        fail(f"invalid decision: {err}", EXIT_BAD_INPUT)

    async def go() -> None:
        client = await client_for(settings)
        try:
            if gate is GateName.CYCLE:
                from workers.cli.studies import study_client

                record = await study_client(client).decide(run_id, decision)
            else:
                record = await client.decide(run_id, decision)
        except GateDecisionError as err:
            fail(f"refused: {err}")
        where = f"task {task} " if task else ""
        inside = f"of branch {branch} " if branch else ""
        chosen = (f": {record.choice} kept" if record.gate == "branch" and record.choice
                  else f": {record.choice} chosen" if record.choice else "")
        typer.echo(f"{where}{inside}{record.gate} gate {record.decided_text()}{chosen}")

    run_async(go())


@dataclass(frozen=True)
class DecisionOptions:
    """``assay approve``'s options as typed (checked by :func:`gate_decision`)."""

    gate: GateName
    by: str
    task: str | None = None
    reject: bool = False
    comment: str = ""
    choose: str | None = None
    modify: bool = False
    sets: list[str] = field(default_factory=list[str])
    branch: str | None = None


def gate_decision(opts: DecisionOptions) -> GateDecision:
    """The decision ``opts`` ask for, refused if the options do not fit together.

    Raises:
        ValueError: options that contradict each other, or a malformed one (an
            :class:`InputError`, or pydantic's error); the message says which.
    """
    if opts.gate is GateName.BRANCH and (opts.choose is None) != opts.reject:
        raise InputError("the branch gate takes --choose NAME (the line to keep) or --reject")
    if opts.choose is not None and opts.gate not in (GateName.BRANCH, GateName.CYCLE):
        raise InputError("--choose is for the branch gate (--gate branch) and a study's "
                         "cycle gate (--gate cycle)")
    if opts.gate is GateName.CYCLE:
        check_cycle_choice(opts)
    if opts.modify and (opts.gate not in (GateName.STEP, GateName.ERROR) or opts.task is None):
        raise InputError("--modify is for the step and error gates of a task (--gate step "
                         "or error, --task T)")
    if opts.modify and opts.reject:
        raise InputError("--modify and --reject contradict each other; give one")
    if opts.modify != bool(opts.sets):
        raise InputError("--modify needs at least one --set FIELD=VALUE, and --set needs "
                         "--modify")
    if opts.branch is not None and opts.task is None:
        raise InputError("--branch names the branch of a task's gate; give --task too")
    plain(opts.by, "--by")
    plain(opts.comment, "--comment", lines=True)
    decision = "modify" if opts.modify else "reject" if opts.reject else "approve"
    return GateDecision.model_validate({
        "gate": opts.gate.kind, "task_id": opts.task, "branch": opts.branch, "by": opts.by,
        "decision": decision, "comment": opts.comment,
        "choice": plain(opts.choose, "--choose") if opts.choose else None,
        "set": parse_sets(opts.sets), "channel": "cli"})


def check_cycle_choice(opts: DecisionOptions) -> None:
    """A ``cycle`` gate's options: no task or branch; a ``--choose`` the study can take."""
    from workflows.study.requests import CHOICES

    if opts.task is not None or opts.branch is not None:
        raise InputError("the cycle gate is a study's own: it takes no --task or --branch")
    if opts.choose is None:
        return
    if opts.reject:
        raise InputError("--choose and --reject contradict each other; give one (--choose "
                         "stop also ends the study)")
    action, colon, target = opts.choose.partition(":")
    if not ((action in ("iterate", "fix", "stop") and not colon)
            or (action == "pivot" and target)):
        raise InputError(f"--choose {opts.choose[:60]!r}: choose one of {', '.join(CHOICES)} "
                         "(H: an open hypothesis, see `assay hypotheses STUDY`)")


def gates() -> None:
    """List the gates waiting for a person, and runs and studies waiting for a plan."""
    from workers.cli.show import decide_hint, plan_hint, short
    from workflows.contracts.words import singular_counts

    async def go() -> None:
        from workers.cli.studies import study_client, waiting_text

        client = await client_for(Settings())
        pending = await client.pending_gates()
        studies = study_client(client)
        waiting = await studies.waiting()
        if not pending and not waiting:
            typer.echo("no gates, runs or studies are waiting for a person")
        for progress in waiting:
            approvers = [] if progress.waiting is None else (await studies.started_with(
                progress.study_id)).policy.gates.cycle.approvers
            typer.echo(f"{progress.study_id}  {waiting_text(progress, approvers)}")
        for item in pending:
            if item.gate is None:
                typer.echo(f"{item.run_id}  {plan_hint(item.run_id)}")
                continue
            task = f" --task {item.gate.task_id}" if item.gate.task_id else ""
            refused = (f", {item.gate.refused_count} refused (assay status {item.run_id})"
                       if item.gate.refused_count else "")
            typer.echo(f"{item.run_id}{task} --gate {item.gate.gate}  "
                       f"(waiting since {item.gate.opened_at:%Y-%m-%d %H:%M}{refused}): "
                       f"{short(singular_counts(item.gate.question))}; "
                       + decide_hint(item.run_id, item.gate, item.approvers))

    run_async(go())
