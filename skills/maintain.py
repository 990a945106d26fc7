"""Deterministic upkeep of the skill library: utility, pruning, merging and version trials.

Without upkeep a library fills with patterns nobody uses and near-copies that split their
statistics. At each maintenance point the live patterns (active and trial;
candidates still await a person, retired ones are gone) are scored by utility, the bottom
share of those retrieved at least ``GRACE_RETRIEVALS`` times is retired (a pattern with no
exposure yet is not judged), and pairs of the same kind that the vector store finds similar
are merged, most similar first and again with each survivor until no pair above theta_merge
is left, when a structural judge agrees they are the same pattern. A use (u) is counted only
when the task's job showed it (:mod:`skills.utilisation`), so utility and pruning rest on what
tasks used, not on what they were offered. Statistics add up: a survivor
carries the sum of both patterns' r/u/s, durations and costs. Pairs of the same structure just
below the merge similarity are *undecided*: the structural judge cannot tell them apart from
near-copies, so they are listed for the model's merge judge and otherwise left alone.

Versions roll out gradually: a trial version gets a fixed share of matching tasks, chosen by
a hash of the task so a retried task sees the same version, and is promoted or retired once
its measured success is known.

Pure functions: the activity reads the library, asks the vector store for similarities and
writes back what the plan says.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from workflows.library.formulas import (
    GRACE_RETRIEVALS,
    MERGE_SIMILARITY,
    PRUNE_FRACTION,
    TRIAL_USES,
    UNDECIDED_BAND,
    utility,
)
from workflows.library.patterns import Skill

COMPETING = frozenset({"active", "trial"})
"""Statuses that take part in maintenance."""
MAX_SOURCE_RUNS = 200
MAX_TAGS = 32

TrialVerdict = Literal["promote", "retire", "continue"]


@dataclass
class MaintenancePlan:
    """What one maintenance pass will do, decided before anything is written."""

    scores: dict[str, float] = field(default_factory=dict[str, float])
    """Utility of every competing pattern, by skill id."""
    prune: list[str] = field(default_factory=list[str])
    """Skill ids to retire, lowest utility first."""
    merges: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    """``(survivor, absorbed)`` pairs in the order they apply, most similar first; a survivor
    may absorb again, and absorb what was itself a survivor earlier."""
    refused: list[tuple[str, str, str]] = field(default_factory=list[tuple[str, str, str]])
    """``(a, b, reason)``: similar pairs the judge kept apart."""
    undecided: list[tuple[str, str, float]] = field(
        default_factory=list[tuple[str, str, float]])
    """``(a, b, similarity)``: same-structure pairs just below the merge similarity, most
    similar first, none sharing a pattern with a merge or another undecided pair."""


def scores(skills: Sequence[Skill]) -> dict[str, float]:
    """The utility of each pattern (``workflows.library.formulas.utility``), by skill id."""
    return {s.skill_id: utility(s.metrics) for s in skills}


def plan_maintenance(skills: Sequence[Skill], similarity: Callable[[str, str], float], *,
                     prune_fraction: float = PRUNE_FRACTION,
                     merge_similarity: float = MERGE_SIMILARITY,
                     grace: int = GRACE_RETRIEVALS,
                     undecided_band: float = UNDECIDED_BAND) -> MaintenancePlan:
    """Decide one pass: which patterns to prune and which pairs to merge.

    A competing pattern is judged once it has been retrieved ``grace`` times: before that its
    utility (0 with no use) says nothing, so a new, imported or built-in pattern is never
    pruned for lack of exposure. Of the ``n`` judged patterns, the ``floor(n * prune_fraction)``
    with the lowest utility are pruned (ties: the lower skill id first). Among the rest, pairs
    of the same kind at least ``merge_similarity`` similar are merged agglomeratively (seed
    003): the most similar pair first, its survivor carrying both patterns' statistics into
    the next merge, until no pair at or above ``merge_similarity`` is left; a pair merges only
    when :func:`judge` agrees. Merges are listed in the order they are applied. Pairs within
    ``undecided_band`` below ``merge_similarity`` that :func:`judge` finds the same shape are
    undecided: listed, never merged here.

    Args:
        skills: the library (statuses other than active and trial are ignored).
        similarity: similarity of two patterns given their skill ids (lower id first).
        prune_fraction: alpha, the share of the scored patterns pruned.
        merge_similarity: theta_merge, the least similarity offered to the judge.
        grace: retrievals before a pattern is judged.
        undecided_band: how far below ``merge_similarity`` a pair is still undecided.

    Raises:
        ValueError: a fraction or threshold outside [0, 1], or a skill id given twice.
    """
    for label, value in (("prune_fraction", prune_fraction),
                         ("merge_similarity", merge_similarity),
                         ("undecided_band", undecided_band)):
        if not 0 <= value <= 1:
            raise ValueError(f"{label} is {value!r}; it must be within [0, 1]")
    ids = [s.skill_id for s in skills]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"skill ids given more than once: {', '.join(twice)}")
    live = sorted((s for s in skills if s.status in COMPETING), key=lambda s: s.skill_id)
    plan = MaintenancePlan(scores=scores(live))
    judged = [s for s in live if s.metrics.retrieved >= grace]
    ranked = sorted(judged, key=lambda s: (plan.scores[s.skill_id], s.skill_id))
    plan.prune = [s.skill_id for s in ranked[:math.floor(len(judged) * prune_fraction)]]
    pruned = set(plan.prune)
    _plan_merges(plan, [s for s in live if s.skill_id not in pruned], similarity,
                 merge_similarity, merge_similarity - undecided_band)
    return plan


def _plan_merges(plan: MaintenancePlan, live: list[Skill],
                 similarity: Callable[[str, str], float], threshold: float,
                 near: float) -> None:
    pairs: list[tuple[float, Skill, Skill]] = []
    for i, a in enumerate(live):
        for b in live[i + 1:]:
            if a.pattern.kind != b.pattern.kind:
                continue
            sim = float(similarity(a.skill_id, b.skill_id))
            if sim >= near:  # NaN never qualifies
                pairs.append((sim, a, b))
    pairs.sort(key=lambda p: (-p[0], p[1].skill_id, p[2].skill_id))
    taken = _agglomerate(plan, [(sim, a, b) for sim, a, b in pairs if sim >= threshold])
    for sim, a, b in pairs:
        if sim >= threshold or a.skill_id in taken or b.skill_id in taken:
            continue
        if judge(a, b) is None:
            plan.undecided.append((a.skill_id, b.skill_id, sim))
            taken.update((a.skill_id, b.skill_id))


def _agglomerate(plan: MaintenancePlan, candidates: list[tuple[float, Skill, Skill]]) -> set[str]:
    """Merge the most similar candidate pair, again and again, until none is left.

    ``candidates`` are the pairs at or above theta_merge, most similar first. A survivor keeps
    its pattern (and so its similarities) with both patterns' statistics, and stays a
    candidate for the next merge; an absorbed pattern leaves every remaining pair. Returns
    the ids that took part in a merge.
    """
    current: dict[str, Skill] = {}
    absorbed_ids: set[str] = set()
    utilities = dict(plan.scores)
    for _, first, second in candidates:
        if first.skill_id in absorbed_ids or second.skill_id in absorbed_ids:
            continue
        a, b = current.get(first.skill_id, first), current.get(second.skill_id, second)
        reason = judge(a, b)
        if reason is not None:
            plan.refused.append((a.skill_id, b.skill_id, reason))
            continue
        survivor, absorbed = order_pair(a, b, utilities)
        kept, _ = merge(survivor, absorbed)
        current[kept.skill_id] = kept
        utilities[kept.skill_id] = utility(kept.metrics)
        absorbed_ids.add(absorbed.skill_id)
        plan.merges.append((survivor.skill_id, absorbed.skill_id))
    return absorbed_ids | {survivor for survivor, _ in plan.merges}


def order_pair(a: Skill, b: Skill, utilities: dict[str, float]) -> tuple[Skill, Skill]:
    """``(survivor, absorbed)``: the higher utility survives; on a tie, the lower id."""
    ua, ub = utilities[a.skill_id], utilities[b.skill_id]
    if ua > ub or (ua == ub and a.skill_id < b.skill_id):
        return a, b
    return b, a


def judge(a: Skill, b: Skill) -> str | None:
    """Whether two similar patterns are the same pattern: ``None`` if so, else why not.

    The structural merge judge: same kind, same parameter names and types, same expected
    artifacts and metrics, and the same data input types in their preconditions.
    """
    pa, pb = a.pattern, b.pattern
    if pa.kind != pb.kind:
        return f"{a.skill_id} is a {pa.kind} pattern and {b.skill_id} a {pb.kind} pattern"
    params_a = sorted(f"{p.name} ({p.type})" for p in pa.parameters)
    params_b = sorted(f"{p.name} ({p.type})" for p in pb.parameters)
    if params_a != params_b:
        return _differ("parameters", a, params_a, b, params_b)
    for label, get in (("expected artifacts", _artifacts), ("expected metrics", _metrics)):
        va, vb = get(a), get(b)
        if va != vb:
            return _differ(label, a, va, b, vb)
    types_a = sorted(set(pa.preconditions.input_types))
    types_b = sorted(set(pb.preconditions.input_types))
    if types_a != types_b:
        return _differ("input types", a, types_a, b, types_b)
    return None


def _artifacts(skill: Skill) -> list[str]:
    job = skill.pattern.job
    return sorted(set(job.expected_artifacts)) if job is not None else []


def _metrics(skill: Skill) -> list[str]:
    job = skill.pattern.job
    return sorted(set(job.expected_metrics)) if job is not None else []


def _differ(label: str, a: Skill, va: list[str], b: Skill, vb: list[str]) -> str:
    def shown(values: list[str]) -> str:
        return ", ".join(values) if values else "none"

    return (f"{label} differ: {a.skill_id} has {shown(va)}; {b.skill_id} has {shown(vb)}")


def merge(survivor: Skill, absorbed: Skill) -> tuple[Skill, Skill]:
    """Merge ``absorbed`` into ``survivor``: the statistics of both, the absorbed retired.

    The survivor keeps its pattern and origin, with both patterns' source runs and tags; the
    absorbed one keeps its own statistics for the audit trail (it no longer counts: it is
    retired), so the library's live totals are unchanged by a merge.

    Raises:
        ValueError: merging a pattern into itself or across kinds.
    """
    if survivor.skill_id == absorbed.skill_id:
        raise ValueError(f"cannot merge {survivor.skill_id} into itself")
    if survivor.pattern.kind != absorbed.pattern.kind:
        raise ValueError(f"cannot merge the {absorbed.pattern.kind} pattern {absorbed.skill_id} "
                         f"into the {survivor.pattern.kind} pattern {survivor.skill_id}")
    runs = list(survivor.pattern.source_runs)
    runs.extend(r for r in absorbed.pattern.source_runs if r not in runs)
    tags = sorted(set(survivor.pattern.tags) | set(absorbed.pattern.tags))[:MAX_TAGS]
    pattern = survivor.pattern.model_copy(
        update={"source_runs": runs[-MAX_SOURCE_RUNS:], "tags": tags})
    note = f"absorbed {absorbed.skill_id}"
    kept = survivor.model_copy(update={
        "pattern": pattern, "metrics": survivor.metrics.merged(absorbed.metrics),
        "note": f"{survivor.note}; {note}" if survivor.note else note})
    gone = absorbed.model_copy(update={"status": "retired",
                                       "note": f"merged into {survivor.skill_id}"})
    return kept, gone


def apply_prune(skill: Skill, *, finished: int | None = None) -> Skill:
    """``skill`` retired by pruning, its note giving its utility and the maintenance pass.

    Args:
        skill: the pattern to retire.
        finished: the finished-task count of the maintenance pass, when known.
    """
    when = f" at {finished} finished tasks" if finished is not None else ""
    return skill.model_copy(update={
        "status": "retired",
        "note": (f"pruned by maintenance{when}: utility {utility(skill.metrics):.4f}, among "
                 "the lowest of the library")})


def choose_version(active: Skill, trial: Skill | None, key: str) -> Skill:
    """The version a task runs: the trial for ``trial.share`` of keys, else the active one.

    The split is by sha256 of ``key`` (e.g. ``run_id/task_id``), so it is reproducible: the
    same task always gets the same version, in replays and retries alike.
    """
    if trial is None or trial.share <= 0:
        return active
    point = int.from_bytes(hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()[:8])
    return trial if point / 2**64 < trial.share else active


def judge_trial(active: Skill, trial: Skill, *, min_uses: int = TRIAL_USES) -> TrialVerdict:
    """Whether a trial version replaces the active one, is retired, or needs more uses.

    After ``min_uses`` uses, the trial is promoted when its success rate on those uses is at
    least the active version's (measured on its uses when it has any, else its success rate
    with the extraction evidence), and retired otherwise.

    Raises:
        ValueError: ``min_uses`` below 1.
    """
    if min_uses < 1:
        raise ValueError(f"min_uses is {min_uses}; a trial needs at least one use")
    if trial.metrics.used < min_uses:
        return "continue"
    measured = trial.metrics.succeeded / trial.metrics.used
    am = active.metrics
    bar = am.succeeded / am.used if am.used else am.success_rate
    return "promote" if measured >= bar else "retire"
