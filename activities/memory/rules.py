"""What memory knows, turned into changes: rules applied to jobs, rules built from episodes.

Pure functions shared by reflection (a proven fix for a failure), intake (rules and templates
applied to a new plan) and the memory writer (promotion). A rule never applies silently to a
job it no longer fits: a missing field, a value of another type or a patch the guardrails
refuse makes it *skipped*, with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from activities.patches.apply import RESOURCE_FIELDS, PatchError, apply_patch
from workflows.common.guard import check_patch
from workflows.contracts.memory import (
    Episode,
    Limit,
    MemoryRule,
    ProceduralTemplate,
    Recommendation,
    RuleUse,
    rule_confidence,
)
from workflows.contracts.plan import JobSpec, Scalar
from workflows.contracts.policy import ReviewPolicy
from workflows.contracts.reflection import PatchChange, PatchSource


def field_value(job: JobSpec, name: str) -> tuple[bool, Scalar | None]:
    """Whether ``job`` has the patchable field ``name``, and its value.

    ``name`` is ``args.<argument>`` or ``resources.memory_mb|timeout_s|cpus``.
    """
    head, _, rest = name.partition(".")
    if head == "args" and rest:
        return (rest in job.args), job.args.get(rest)
    if head == "resources" and rest in RESOURCE_FIELDS:
        return True, getattr(job.resources, rest)
    return False, None


def _same_kind(a: Scalar | None, b: Scalar) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool)
    numeric = (int, float)
    return (isinstance(a, numeric) and isinstance(b, numeric)) or type(a) is type(b)


def recommended_changes(job: JobSpec, rec: Recommendation) -> tuple[list[PatchChange], str]:
    """The changes a recommendation makes to ``job``, or why it does not fit.

    Returns:
        ``(changes, "")`` when it applies (changes may be empty: already satisfied), or
        ``([], reason)`` when a field is missing or holds another type of value.
    """
    changes: list[PatchChange] = []
    for name, value in rec.parameters.items():
        present, current = field_value(job, name)
        if not present:
            return [], f"the job has no {name}"
        if not _same_kind(current, value):
            return [], (f"the job's {name} is {current!r}, not a "
                        f"{type(value).__name__} like the rule's {value!r}")
        limit = rec.limits.get(name, "set")
        if _satisfied(current, value, limit):
            continue
        if isinstance(current, int) and isinstance(value, float) and value.is_integer():
            value = int(value)
        changes.append(PatchChange(field=name, old_value=current, new_value=value,
                                   reason=f"{rec.action} ({limit} {value!r})"))
    return changes, ""


def _satisfied(current: Scalar | None, value: Scalar, limit: Limit) -> bool:
    if limit == "set" or isinstance(value, bool | str) or not isinstance(current, int | float):
        return current == value
    if limit == "max":
        return current <= value
    return current >= value


@dataclass
class Applied:
    """Rules applied to one job: the patched job, what each rule changed, what was skipped."""

    job: JobSpec
    uses: list[RuleUse] = field(default_factory=list[RuleUse])
    skipped: list[str] = field(default_factory=list[str])


def apply_rules(job: JobSpec, rules: Sequence[MemoryRule], policy: ReviewPolicy, *,
                min_confidence: float) -> Applied:
    """Apply every confident, fitting, non-conflicting rule to ``job`` under the guardrails."""
    done = Applied(job=job)
    chosen = _without_conflicts(rules, min_confidence, done.skipped)
    changes: dict[str, PatchChange] = {}  # one change per field: agreeing rules share it
    for rule in chosen:
        mine, problem = recommended_changes(job, rule.recommendation)
        if problem:
            done.skipped.append(f"rule {rule.rule_id} no longer applies: {problem}")
        elif not mine:
            done.skipped.append(f"rule {rule.rule_id} is already satisfied by the job")
        else:
            for change in mine:
                changes.setdefault(change.field, change)
            done.uses.append(RuleUse(rule_id=rule.rule_id, root_cause=rule.root_cause,
                                     confidence=rule.confidence, changes=mine))
    if not changes:
        return done
    try:
        patched = apply_patch(job, list(changes.values()))
    except PatchError as err:
        return _refused(done, job, str(err))
    violations = check_patch(job, patched, policy)
    if violations:
        return _refused(done, job, "; ".join(violations))
    done.job = patched
    return done


def _refused(done: Applied, job: JobSpec, why: str) -> Applied:
    skipped = [*done.skipped, *(f"rule {u.rule_id} refused by the guardrails: {why}"
                                for u in done.uses)]
    return Applied(job=job, skipped=skipped)


def _without_conflicts(rules: Sequence[MemoryRule], min_confidence: float,
                       skipped: list[str]) -> list[MemoryRule]:
    """Confident active rules; where two set one field differently, the more confident wins.

    Equal confidence on a conflict means memory cannot tell: both are skipped.
    """
    confident: list[MemoryRule] = []
    for rule in rules:
        if rule.status != "active":
            skipped.append(f"rule {rule.rule_id} is {rule.status}")
        elif rule.confidence < min_confidence:
            skipped.append(f"rule {rule.rule_id} has confidence {rule.confidence:.2f}, below "
                           f"{min_confidence:.2f}")
        else:
            confident.append(rule)
    losers: set[str] = set()
    for i, a in enumerate(confident):
        for b in confident[i + 1:]:
            shared = [f for f in a.recommendation.parameters
                      if f in b.recommendation.parameters
                      and a.recommendation.parameters[f] != b.recommendation.parameters[f]]
            if not shared:
                continue
            if a.confidence == b.confidence:
                losers.update((a.rule_id, b.rule_id))
                skipped.append(f"rules {a.rule_id} and {b.rule_id} conflict on "
                               f"{', '.join(shared)} with equal confidence: neither applied")
                continue
            win, lose = (a, b) if a.confidence > b.confidence else (b, a)
            losers.add(lose.rule_id)
            skipped.append(f"rule {lose.rule_id} conflicts with {win.rule_id} on "
                           f"{', '.join(shared)}: the more confident {win.rule_id} applies")
    return [r for r in confident if r.rule_id not in losers]


def proven_fix(job: JobSpec, root_cause: str, rules: Sequence[MemoryRule],
               episodes: Sequence[Episode],
               ) -> tuple[list[PatchChange], PatchSource, str] | None:
    """A fix memory has seen work for this root cause: an active rule first, then an episode.

    Returns ``(changes, source, reference)`` (``semantic_rule`` and the rule id, or
    ``episodic`` and the episode id), or ``None`` when memory has nothing that fits the job.
    """
    for rule in rules:
        if rule.root_cause == root_cause and rule.status == "active":
            changes, problem = recommended_changes(job, rule.recommendation)
            if changes and not problem:
                return changes, "semantic_rule", rule.rule_id
    for episode in episodes:  # newest first
        if episode.root_cause != root_cause or episode.outcome != "fixed" or not episode.fix:
            continue
        rec = Recommendation(action=f"fix {root_cause}", parameters=episode.fix,
                             limits=limits_of(episode))
        changes, problem = recommended_changes(job, rec)
        if changes and not problem:
            return changes, "episodic", episode.episode_id
    return None


def limits_of(episode: Episode) -> dict[str, Limit]:
    """How a fix moved each field: lowered (``max``), raised (``min``) or set."""
    first: dict[str, Scalar] = {}
    for change in episode.changes:
        first.setdefault(change.field, change.old_value)
    limits: dict[str, Limit] = {}
    for name, final in episode.fix.items():
        before = first.get(name)
        numeric = (isinstance(before, int | float) and isinstance(final, int | float)
                   and not isinstance(before, bool) and not isinstance(final, bool))
        limits[name] = ("set" if not numeric or before == final
                        else "max" if final < before else "min")  # type: ignore[operator]
    return limits


def rule_from_episodes(rule_id: str, task_type: str, root_cause: str,
                       episodes: Sequence[Episode], occurrences: int) -> MemoryRule | None:
    """A rule for a pattern seen in ``occurrences`` tasks, with the newest fix that worked.

    Evidence counts distinct tasks: fixed (successes) and never fixed (failures). ``None``
    when no task was ever fixed: a pattern without a working fix recommends nothing.
    """
    relevant = [e for e in episodes if e.root_cause == root_cause]
    fixed = [e for e in relevant if e.outcome == "fixed" and e.fix]
    if not fixed:
        return None
    newest = fixed[0]
    successes = len({(e.run_id, e.task_id) for e in fixed})
    failures = len({(e.run_id, e.task_id) for e in relevant if e.outcome == "unfixed"})
    settings = ", ".join(f"{k} = {v!r}" for k, v in newest.fix.items())
    return MemoryRule(
        rule_id=rule_id, task_type=task_type, root_cause=root_cause,
        pattern=f"{task_type}: {root_cause}",
        observation=f"{root_cause} in {occurrences} tasks of type {task_type}; fixed by "
                    f"{settings}",
        recommendation=Recommendation(action=f"avoid {root_cause}: {settings}",
                                      parameters=dict(newest.fix), limits=limits_of(newest)),
        occurrences=occurrences, success_count=successes, failure_count=failures,
        confidence=rule_confidence(successes, failures), status="active",
        created_at=newest.recorded_at, last_validated=newest.recorded_at)


def matching_template(templates: Sequence[ProceduralTemplate], input_names: Sequence[str],
                      skipped: list[str]) -> ProceduralTemplate | None:
    """The most proven cached template whose inputs the task has (others are skipped)."""
    have = set(input_names)
    for template in templates:
        missing = [n for n in template.input_names if n not in have]
        if not missing:
            return template
        skipped.append(f"template {template.template_id} needs inputs the task lacks: "
                       f"{', '.join(missing)}")
    return None
