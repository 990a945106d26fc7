"""``assay skills``: see, approve and retire skills (``skill_folders``: folders; ``skill_search``).

Extraction adds candidates; nothing is applied to a task until a person (or a confident
extraction) approves it. People review candidates here, approve one as the active version or
for a trial on a share of matching tasks, retire what should no longer be used, and move
skills between libraries as Agent Skills folders. Every change is made in the name of ``--by``
(default: the configured user) and recorded in the skill's history.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from workers.cli.common import (
    EXIT_BAD_INPUT,
    ByOption,
    fail,
    print_table,
    table,
    when,
    with_database,
)
from workers.settings import Settings
from workflows.contracts.patterns import SkillStatus
from workflows.contracts.plan import Scalar
from workflows.library.formulas import utility

if TYPE_CHECKING:
    from skills.store import SkillEvent, SkillStore
    from workflows.contracts.patterns import Skill, SkillParameter, SkillPattern

T = TypeVar("T")

skills_app = typer.Typer(
    no_args_is_help=True,
    help="The skill library: list, show, search, approve, retire, export and import skills.")

STATUSES: tuple[SkillStatus, ...] = ("candidate", "active", "trial", "retired")
IN_USE: tuple[SkillStatus, ...] = ("candidate", "active", "trial")
MATCHED: tuple[SkillStatus, ...] = ("active", "trial")
IdArgument = Annotated[str, typer.Argument(help="The skill's id, NAME@vVERSION.")]


def with_store(use: Callable[[SkillStore], Awaitable[T]]) -> T:
    """Run ``use`` against the skill library of the configured database.

    An unreachable database, an unknown or unreadable skill, a refused status change and a
    taken id end the command with one clear line.
    """
    from skills.store import (
        SkillExists,
        SkillInvalid,
        SkillNotFound,
        SkillStatusError,
        SkillStore,
        SkillUnreadable,
    )

    return with_database(SkillStore, use, refused=(SkillInvalid,), failed=(
        SkillNotFound, SkillStatusError, SkillUnreadable, SkillExists))


def chosen_statuses(given: Sequence[str] | None, show_all: bool) -> tuple[SkillStatus, ...]:
    """The statuses ``--status``/``--all`` ask for; an unknown one ends the command (exit 2)."""
    if not given:
        return STATUSES if show_all else IN_USE
    unknown = [s for s in given if s not in STATUSES]
    if unknown:
        fail(f"unknown status {', '.join(unknown)}: use {', '.join(STATUSES)}", EXIT_BAD_INPUT)
    return tuple(s for s in STATUSES if s in given)


# --- showing one skill ---------------------------------------------------------------------


def shown(value: Scalar | None) -> str:
    """A parameter value as a person would type it."""
    return "-" if value is None else repr(value) if isinstance(value, str) else f"{value}"


def parameter_line(p: SkillParameter) -> str:
    """``name  type (target); default; range; options; extensions; description``."""
    parts = [f"{p.type}" + (" (data input)" if p.target == "input" else "")]
    if p.default is not None:
        parts.append(f"default {shown(p.default)}")
    if p.minimum is not None or p.maximum is not None:
        low = "" if p.minimum is None else f"{p.minimum:g}"
        high = "" if p.maximum is None else f"{p.maximum:g}"
        parts.append(f"range {low}..{high}")
    if p.options:
        parts.append("options " + ", ".join(shown(o) for o in p.options))
    if p.extensions:
        parts.append("extensions " + ", ".join(p.extensions))
    if p.description:
        parts.append(p.description)
    return f"  {p.name:<16}" + "; ".join(parts)


def field(name: str, value: str) -> str:
    """``name:`` padded to one column, then the value."""
    return f"{name + ':':<18}{value}".rstrip()


def pattern_lines(p: SkillPattern) -> list[str]:
    """What a pattern says: when it applies, its parameters, steps, outputs and checks.

    A long guideline is shown as a prompt takes it (``assay skills reference`` pages on).
    """
    from skills.guidance import prompt_guideline

    pre = p.preconditions
    conditions = "; ".join(f"{label} {', '.join(items)}" for label, items in (
        ("input types", pre.input_types), ("imports", pre.imports),
        ("keywords", pre.keywords)) if items)
    lines = [field("description", p.description), field("context", p.context or "-")]
    lines += [field(name, value) for name, value in (
        ("guideline", prompt_guideline(p)), ("action", p.action), ("preconditions", conditions),
        ("tags", ", ".join(p.tags))) if value]
    if p.parameters:
        lines += ["parameters:", *(parameter_line(param) for param in p.parameters)]
    if p.steps:
        lines += ["steps:", *(f"  {n}. {s.agent}/{s.phase}" + (f": {s.detail}" if s.detail
                                                                else "")
                              for n, s in enumerate(p.steps, 1))]
    lines += expected_lines(p)
    if p.recovery:
        lines += ["recovery:", *(f"  {c.field}: {c.old_value!r} -> {c.new_value!r}"
                                 + (f" ({c.reason})" if c.reason else "") for c in p.recovery)]
    lines += [field(name, value) for name, value in (
        ("contrast", p.contrast), ("source runs", ", ".join(p.source_runs))) if value]
    return lines + folder_lines(p)


def folder_lines(p: SkillPattern) -> list[str]:
    """An imported folder's licence, the files kept with it and its flagged lines."""
    lines = [field("license", p.license)] if p.license else []
    if p.files:
        names = ", ".join(f.path for f in p.files[:8]) + (" …" if len(p.files) > 8 else "")
        lines.append(field("files", f"{len(p.files)} kept ({sum(f.size for f in p.files)} "
                                    f"bytes): {names}"))
    if p.flags:
        lines += [f"flags:            {len(p.flags)} line(s) may try to instruct a model",
                  *(f"  ! {flag}" for flag in p.flags)]
    return lines


def expected_lines(p: SkillPattern) -> list[str]:
    """The job a pattern supplies, what it should leave behind, and the checks on it."""
    lines: list[str] = []
    if p.job is not None:
        job = p.job
        what = f"script {job.entry}" if job.entry else "inline code"
        args = ", ".join(f"{k}={shown(v)}" for k, v in job.args.items())
        lines.append(field("job", what + (f"; args {args}" if args else "")))
        outputs = "; ".join(f"{label} {', '.join(items)}" for label, items in (
            ("artifacts", job.expected_artifacts), ("metrics", job.expected_metrics)) if items)
        if outputs:
            lines.append(field("expected outputs", outputs))
    if p.acceptance_criteria:
        lines += ["acceptance:", *(f"  - {c}" for c in p.acceptance_criteria)]
    if p.checks:
        lines.append(field("checks", "; ".join(c.describe() for c in p.checks)))
    return lines


def skill_lines(skill: Skill, events: Sequence[SkillEvent]) -> list[str]:
    """Everything about one skill, as ``assay skills show`` prints it."""
    m = skill.metrics
    status = skill.status + (f" on {skill.share:.0%} of matching tasks"
                             if skill.status == "trial" else "")
    status += f" ({skill.note})" if skill.note else ""
    lines = [field("skill", skill.skill_id), field("kind", skill.pattern.kind),
             field("status", status), field("origin", skill.origin),
             field("confidence", f"{skill.confidence:.2f}"), *pattern_lines(skill.pattern)]
    lines += said_lines(skill, events)
    lines += [
        field("use", f"r {m.retrieved}, u {m.used}, s {m.succeeded}; success rate "
                     f"{m.success_rate:.2f}; utility {utility(m):.2f}"),
        field("mean", f"{m.mean_duration_s:.1f}s, ${m.mean_cost_usd:.4f} per use"),
        field("last used", when(m.last_used)),
        field("evidence", f"{m.evidence_successes} successful and {m.evidence_failures} "
                          "failed source tasks"),
        field("deviations", f"{m.deviations} major in a row"),
        field("created", when(skill.created_at)), field("updated", when(skill.updated_at)),
        "history:"]
    rows = [[str(e.seq), when(e.at), e.by, e.action, json.dumps(e.detail, sort_keys=True)]
            for e in events]
    lines += [f"  {line}" for line in table(["seq", "at", "by", "action", "detail"], rows)]
    return lines


def said_lines(skill: Skill, events: Sequence[SkillEvent]) -> list[str]:
    """What the skill writer said of the skill, and what extraction grouped it from."""
    from skills.writing import writer_said

    written = next((e.detail for e in reversed(events) if e.action == "written"), None)
    return [field(label, text) for label, text in writer_said(skill.pattern, written)]


@skills_app.command("list")
def list_skills(
    status: Annotated[list[str] | None, typer.Option(
        "--status", "-s", help="Only this status: candidate, active, trial or retired "
        "(repeatable).")] = None,
    show_all: Annotated[bool, typer.Option("--all", help="Also list retired skills.")] = False,
) -> None:
    """List skills by name and version with their use statistics.

    r: retrieved, u: used, s: succeeded; success counts the extraction evidence. Rows that
    are not valid skills are listed after the table as warnings.
    """
    statuses = chosen_statuses(status, show_all)
    found, warnings = with_store(lambda store: store.scan(statuses))
    if found:
        rows = [[s.skill_id, s.pattern.kind, s.status, str(s.metrics.retrieved),
                 str(s.metrics.used), str(s.metrics.succeeded), f"{s.metrics.success_rate:.2f}",
                 f"{s.metrics.mean_duration_s:.1f}s", f"${s.metrics.mean_cost_usd:.4f}",
                 when(s.metrics.last_used), f"{utility(s.metrics):.2f}"] for s in found]
        print_table(["id", "kind", "status", "r", "u", "s", "success", "time", "cost",
                     "last used", "utility"], rows)
    else:
        typer.echo("no skills" + ("" if status or show_all else " (--all lists retired ones)"))
    for warning in warnings:
        typer.echo(f"warning: {warning}")


@skills_app.command("show")
def show(skill_id: IdArgument,
         as_json: Annotated[bool, typer.Option("--json", help="Print the skill as JSON.")]
         = False) -> None:
    """Show one skill: its pattern, statistics and history."""

    async def read(store: SkillStore) -> tuple[Skill, list[SkillEvent]]:
        return await store.get(skill_id), await store.events(skill_id)

    skill, events = with_store(read)
    if as_json:
        typer.echo(skill.model_dump_json(indent=2))
        return
    for line in skill_lines(skill, events):
        typer.echo(line)


@skills_app.command("approve")
def approve(
    skill_id: IdArgument,
    by: ByOption = None,
    trial: Annotated[float | None, typer.Option(
        "--trial", min=0, max=1, help="Approve for a trial on this share of matching tasks "
        "(e.g. 0.1) instead of making it the active version.")] = None,
) -> None:
    """Approve a candidate: make it the family's active version, or give it a trial.

    Making a version active retires the version that was active before it.
    """
    if trial is not None and trial <= 0:
        fail("--trial takes a share of matching tasks above 0 and at most 1, e.g. 0.1",
             EXIT_BAD_INPUT)
    who = by or Settings().user

    async def change(store: SkillStore) -> tuple[Skill, list[str]]:
        current = await store.get(skill_id)
        before = [s.skill_id for s in await store.family(current.pattern.name)
                  if s.status == "active" and s.skill_id != skill_id]
        stored = await store.set_status(skill_id, "active" if trial is None else "trial",
                                        by=who, share=trial)
        return stored, before if stored.status == "active" else []

    skill, replaced = with_store(change)
    if skill.status == "trial":
        typer.echo(f"skill {skill.skill_id} approved by {who} for a trial on "
                   f"{skill.share:.0%} of matching tasks")
    else:
        typer.echo(f"skill {skill.skill_id} approved by {who}: now active")
    for old in replaced:
        typer.echo(f"skill {old} retired: replaced by {skill.skill_id}")


@skills_app.command("retire")
def retire(skill_id: IdArgument, by: ByOption = None,
           reason: Annotated[str | None, typer.Option("--reason", help="Why.")] = None) -> None:
    """Retire a skill: it is kept for its history but never matched again."""
    who = by or Settings().user
    note = f"retired by {who}: {reason.strip()}" if reason and reason.strip() else ""
    skill = with_store(lambda store: store.set_status(skill_id, "retired", by=who, note=note))
    typer.echo(f"skill {skill.skill_id} {skill.note}")


from workers.cli import (  # noqa: E402  (register export, import, reference; search)
    skill_folders,
    skill_search,
)

__all__ = ["skill_folders", "skill_search", "skills_app"]
