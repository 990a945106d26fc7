"""``assay memory``: see and steer what reflection has learned.

People read the semantic rules, procedural templates, episodes and the memory ledger here, and
switch rules off and on or correct their values. Every change is checksummed and made in the
name of ``--by`` (default: the configured user), so reflection can tell a person's edit from a
change made straight in the database, which it refuses to apply.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from workers.cli.common import (
    EXIT_BAD_INPUT,
    ByOption,
    fail,
    print_table,
    when,
    with_database,
)
from workers.settings import Settings
from workflows.contracts.plan import Scalar
from workflows.contracts.words import plural

if TYPE_CHECKING:
    from activities.memory.store import MemoryStore
    from workflows.contracts.memory import MemoryRule, ProceduralTemplate

T = TypeVar("T")

memory_app = typer.Typer(
    no_args_is_help=True,
    help="Reflection memory: semantic rules, procedural templates, episodes and the ledger.")

TypeOption = Annotated[str | None, typer.Option("--type", "-t", help="Only this task type.")]


def with_store(use: Callable[[MemoryStore], Awaitable[T]]) -> T:
    """Run ``use`` against the memory store of the configured database.

    An unreachable database, an unknown rule and an unusable rule end the command with a
    clear message.
    """
    from activities.memory.store import MemoryStore, RuleNotFound, RuleUnreadable

    return with_database(MemoryStore, use, failed=(RuleNotFound, RuleUnreadable))


def shown(value: Scalar) -> str:
    """A value as ``--set`` takes it: strings bare, numbers and booleans as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def recommendation(rule: MemoryRule) -> str:
    """``field=value (limit)`` for each field a rule changes."""
    rec = rule.recommendation
    return ", ".join(f"{field}={shown(value)}" + (f" ({rec.limits[field]})"
                                                  if field in rec.limits else "")
                     for field, value in rec.parameters.items())


def scalar(text: str) -> Scalar:
    """A ``--set`` value: a JSON number, boolean or string when it is one, else the text."""

    def refuse(constant: str) -> Any:
        raise ValueError(constant)  # NaN and Infinity are not values a job takes

    try:
        value = json.loads(text, parse_constant=refuse)
    except ValueError:
        return text
    return value if isinstance(value, str | int | float | bool) else text


def assignments(items: Sequence[str], option: str, example: str) -> dict[str, str]:
    """``FIELD=VALUE`` items as a mapping; malformed ones end the command (exit 2)."""
    found: dict[str, str] = {}
    for item in items:
        field, sep, value = item.partition("=")
        if not (sep and field.strip() and value.strip()):
            fail(f"{option} {item!r}: expected FIELD=VALUE, e.g. {option} {example}",
                 EXIT_BAD_INPUT)
        found[field.strip()] = value.strip()
    return found


async def adoption_note(store: MemoryStore, rule_id: str) -> str | None:
    """A note when the rule about to be re-saved had been changed outside Assay."""
    from activities.memory.store import RuleTampered

    try:
        await store.rule(rule_id)
    except RuleTampered:
        return (f"note: rule {rule_id} had been changed outside Assay; it is saved as it now "
                "stands, with this change, in your name")
    return None


# --- rules ---------------------------------------------------------------------------------


@memory_app.command("rules")
def list_rules(
    task_type: TypeOption = None,
    show_all: Annotated[bool, typer.Option("--all", help="Also list disabled rules.")] = False,
) -> None:
    """List semantic rules, most confident first.

    Active, demoted and candidate rules are listed; --all adds disabled ones. Rules that cannot
    be used (unreadable, or changed outside Assay) are listed after the table as warnings.
    """
    statuses = None if show_all else ("active", "demoted", "candidate")
    found, warnings = with_store(lambda store: store.rules(task_type, statuses=statuses))
    if found:
        rows = [[r.rule_id, r.task_type, r.root_cause, recommendation(r),
                 f"{r.success_count}/{r.failure_count}", f"{r.confidence:.2f}", r.status]
                for r in found]
        print_table(["rule", "task type", "root cause", "recommendation", "s/f", "confidence",
                     "status"], rows)
    else:
        typer.echo("no rules" + (f" for task type {task_type}" if task_type else ""))
    for warning in warnings:
        typer.echo(f"warning: {warning}")


@memory_app.command("show")
def show_rule(rule_id: Annotated[str, typer.Argument(help="The rule's id.")],
              as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show everything about one rule."""
    from activities.memory.store import RuleTampered

    async def read(store: MemoryStore) -> tuple[MemoryRule | None, str | None]:
        try:
            return await store.rule(rule_id), None
        except RuleTampered as err:
            return await store.rule(rule_id, allow_tampered=True), str(err)

    rule, warning = with_store(read)
    if warning:
        typer.echo(f"warning: {warning}", err=True)
    if rule is None:
        fail(f"no rule {rule_id!r}; `assay memory rules --all` lists them")
    if as_json:
        typer.echo(rule.model_dump_json(indent=2))
        return
    rec = rule.recommendation
    fields = [
        ("rule", rule.rule_id), ("task type", rule.task_type), ("root cause", rule.root_cause),
        ("status", rule.status), ("pattern", rule.pattern), ("observation", rule.observation),
        ("recommendation", f"{rec.action}: {recommendation(rule)}"),
        ("evidence", f"{plural(rule.occurrences, 'occurrence')}, "
                     f"{plural(rule.success_count, 'success', 'successes')}, "
                     f"{plural(rule.failure_count, 'failure')}"),
        ("confidence", f"{rule.confidence:.2f}"), ("created", when(rule.created_at)),
        ("last validated", when(rule.last_validated)), ("updated by", rule.updated_by),
        ("sha256", rule.sha256),
    ]
    for name, value in fields:
        typer.echo(f"{name + ':':<16}{value}")


def set_status(rule_id: str, status: str, by: str | None) -> None:
    """Give a rule a status in someone's name and say so."""
    from workflows.contracts.memory import DEMOTE_BELOW

    who = by or Settings().user

    async def change(store: MemoryStore) -> tuple[MemoryRule, str | None]:
        note = await adoption_note(store, rule_id)
        return await store.set_rule_status(rule_id, status, who), note

    rule, note = with_store(change)
    if note:
        typer.echo(note, err=True)
    typer.echo(f"rule {rule.rule_id} {'enabled' if status == 'active' else status} by {who}")
    if status == "active" and rule.confidence < DEMOTE_BELOW:
        typer.echo(f"note: its confidence {rule.confidence:.2f} is below {DEMOTE_BELOW}, the "
                   "level under which reflection demotes a rule", err=True)


@memory_app.command("disable")
def disable(rule_id: Annotated[str, typer.Argument(help="The rule's id.")],
            by: ByOption = None) -> None:
    """Stop applying a rule (it stays in memory and can be enabled again)."""
    set_status(rule_id, "disabled", by)


@memory_app.command("enable")
def enable(rule_id: Annotated[str, typer.Argument(help="The rule's id.")],
           by: ByOption = None) -> None:
    """Apply a disabled or demoted rule again."""
    set_status(rule_id, "active", by)


@memory_app.command("approve")
def approve(item_id: Annotated[str, typer.Argument(help="A candidate rule (sem-...) or "
                                                      "template (tpl-...).")],
            by: ByOption = None) -> None:
    """Approve a promotion that waits for a person (policy ``memory.promotion: person``)."""
    if not item_id.startswith("tpl-"):
        set_status(item_id, "active", by)
        return

    async def cache(store: MemoryStore) -> ProceduralTemplate | None:
        return await store.approve_template(item_id)

    if with_store(cache) is None:
        fail(f"no template {item_id!r}; `assay memory templates --all` lists them")
    typer.echo(f"template {item_id} approved by {by or Settings().user}: it is cached")


@memory_app.command("edit")
def edit(
    rule_id: Annotated[str, typer.Argument(help="The rule's id.")],
    values: Annotated[list[str] | None, typer.Option(
        "--set", help="FIELD=VALUE, e.g. args.batch_size=12 (repeatable).")] = None,
    limits: Annotated[list[str] | None, typer.Option(
        "--limit", help="FIELD=max|min|set: how the value applies (repeatable).")] = None,
    observation: Annotated[str | None, typer.Option("--observation")] = None,
    by: ByOption = None,
) -> None:
    """Correct a rule's recommended values, their limits or its observation.

    Fields are args.<name> or resources.memory_mb, resources.timeout_s or resources.cpus;
    values are read as JSON numbers or booleans when they are one (12, 0.5, true), else as
    text. Nothing changes unless every value is valid.
    """
    from activities.memory.schema import problems
    from activities.memory.store import RuleUnreadable

    parameters = {f: scalar(v) for f, v in
                  assignments(values or [], "--set", "args.batch_size=12").items()}
    bounds = assignments(limits or [], "--limit", "args.batch_size=max")
    refused = problems(parameters, bounds, observation)
    if refused:
        fail(f"rule {rule_id} not changed: " + "; ".join(refused), EXIT_BAD_INPUT)
    who = by or Settings().user

    async def change(store: MemoryStore) -> tuple[MemoryRule, str | None]:
        note = await adoption_note(store, rule_id)
        try:
            return await store.edit_rule(rule_id, parameters=parameters, limits=bounds,
                                         observation=observation, by=who), note
        except RuleUnreadable:
            raise
        except ValueError as err:  # the edit does not fit the rule (a limit without a value)
            fail(str(err), EXIT_BAD_INPUT)

    rule, note = with_store(change)
    if note:
        typer.echo(note, err=True)
    typer.echo(f"rule {rule.rule_id} edited by {who}: {recommendation(rule)}")


# --- templates, episodes, ledger -----------------------------------------------------------


@memory_app.command("templates")
def list_templates(
    task_type: TypeOption = None,
    show_all: Annotated[bool, typer.Option("--all", help="Also list job specs not yet "
                                           "cached.")] = False,
) -> None:
    """List procedural templates: job specs that succeeded cleanly, most successes first."""

    async def read(store: MemoryStore) -> list[ProceduralTemplate]:
        return await store.templates(task_type, cached_only=not show_all)

    found = with_store(read)
    if not found:
        typer.echo("no templates" + ("" if show_all else " cached (--all lists candidates)"))
        return
    rows = [[t.template_id, t.task_type, "yes" if t.cached else "no", str(t.clean_successes),
             str(t.uses), str(t.successes), when(t.last_used), t.action[:60]] for t in found]
    print_table(["template", "task type", "cached", "clean", "uses", "successes", "last used",
                 "action"], rows)


@memory_app.command("episodes")
def list_episodes(
    task_type: TypeOption = None,
    limit: Annotated[int, typer.Option(min=1, max=10_000)] = 50,
) -> None:
    """List recorded attempts, newest first."""
    found = with_store(lambda store: store.episodes(task_type, limit=limit))
    if not found:
        typer.echo("no episodes")
        return
    rows = [[when(e.recorded_at), e.run_id, e.task_id, e.task_type, e.phase, str(e.attempt),
             e.root_cause or "-", e.outcome, e.patch_id or "-"] for e in found]
    print_table(["recorded", "run", "task", "task type", "phase", "attempt", "root cause",
                 "outcome", "patch"], rows)


@memory_app.command("prune")
def prune(
    keep: Annotated[int, typer.Option(min=0, help="Episodes kept per task type.")] = 100,
    max_age_days: Annotated[float, typer.Option(min=0, help="Older episodes go.")] = 30,
    task_type: TypeOption = None,
) -> None:
    """Delete old episodes: those older than --max-age-days and beyond --keep per task type."""
    now = datetime.now(UTC)
    deleted = with_store(lambda store: store.prune(now, keep=keep, max_age_days=max_age_days,
                                                   task_type=task_type))
    typer.echo(f"pruned {deleted} episode{'' if deleted == 1 else 's'}")


@memory_app.command("ledger")
def ledger(
    run_id: Annotated[str | None, typer.Option("--run", help="Only this run's entries.")]
    = None,
    limit: Annotated[int, typer.Option(min=1, max=10_000)] = 200,
    verify: Annotated[bool, typer.Option("--verify", help="Check the whole hash chain.")]
    = False,
) -> None:
    """List the memory ledger's last entries, or --verify its hash chain."""
    from activities.memory.store import LedgerBroken

    if verify:
        async def check(store: MemoryStore) -> int:
            try:
                return await store.verify_ledger()
            except LedgerBroken as err:
                fail(str(err))

        count = with_store(check)
        typer.echo(f"memory ledger intact: {count} entr{'y' if count == 1 else 'ies'}")
        return
    entries = with_store(lambda store: store.ledger(run_id, limit))
    if not entries:
        typer.echo("the memory ledger is empty" if run_id is None
                   else f"no ledger entries for run {run_id}")
        return
    rows = [[str(e["seq"]), when(e["recorded_at"]), e["kind"], e["run_id"] or "-",
             e["task_id"] or "-", e["entry_id"], json.dumps(e["body"], sort_keys=True)[:80]]
            for e in entries]
    print_table(["seq", "recorded", "kind", "run", "task", "entry", "body"], rows)
