"""One group of outcomes -> one draft pattern, or the sentence saying why not.

A group with enough successes is generalised around its most common job: parameters and
contrast (``contrast``), preconditions (``preconditions``), the common action, steps and
checks, and prose computed from the data (description, context, guideline). A kind of work
that mostly succeeded only after repairs becomes a subagent whose memory is the repairs.
"""

from __future__ import annotations

from dataclasses import dataclass

from skills.extract.cases import Case, Group, clip, most_common, most_common_case, skill_name
from skills.extract.contrast import contrast_text, fix_text, generalise, needed_repair, proven_fixes
from skills.extract.preconditions import (
    common_checks,
    input_types,
    job_imports,
    keywords,
    output_types,
)
from workflows.contracts.patterns import (
    MAX_DESCRIPTION,
    Preconditions,
    SkillParameter,
    SkillPattern,
    SkillSignature,
    SkillStep,
    name_problem,
)
from workflows.contracts.plan import JobSpec
from workflows.contracts.reflection import PatchChange
from workflows.library.formulas import EXTRACT_EVERY

MIN_SUCCESSES = 3
"""Successful tasks a group needs before it yields a pattern."""
MAX_SOURCE_RUNS = 200


@dataclass(frozen=True)
class Draft:
    """A pattern built from one group, before the library decides where it goes."""

    group: Group
    pattern: SkillPattern
    sha: str

    @property
    def confidence(self) -> float:
        """The draft's confidence from its group's successes and failures."""
        return confidence(len(self.group.ok), len(self.group.bad))


def confidence(successes: int, failures: int) -> float:
    """An extraction's confidence: success ratio times support, in [0, 1].

    Support is ``min(1, successes / EXTRACT_EVERY)``: a pattern seen succeed a whole batch's
    worth of times is fully supported, three successes only 0.3 of it. Ten clean successes give
    1.0; seven successes and three failures give 0.49.
    """
    total = successes + failures
    if total == 0:
        return 0.0
    return round(successes / total * min(1.0, successes / EXTRACT_EVERY), 4)


def draft_pattern(group: Group) -> Draft | str:
    """The pattern a group yields, or why it yields none."""
    total = len(group.ok) + len(group.bad)
    if len(group.ok) < MIN_SUCCESSES:
        return (f"{group.label}: {len(group.ok)} successful of {total} outcome(s); a pattern "
                f"needs at least {MIN_SUCCESSES} successes")
    template = most_common_case(group.ok)
    imports = job_imports(template.source)
    if isinstance(imports, str):
        return f"{group.label}: the job source {imports}; nothing to generalise"
    name = skill_name(group.task_type)
    if (problem := name_problem(name)) is not None:
        return f"{group.label}: {problem}"
    parameters, args, notes = generalise(template, group)
    job = template.job.model_copy(update={"args": args})
    fixes = proven_fixes(group.ok)
    recovered = sum(1 for c in group.ok if needed_repair(c.outcome))
    kind = "subagent" if 2 * recovered >= len(group.ok) else "skill"
    contrast = contrast_text(group, template, notes, fixes)
    pattern = SkillPattern(
        name=name, kind=kind, version=1,
        description=clip(_description(group, job, parameters), MAX_DESCRIPTION),
        context=clip(_context(group, job), 4000),
        guideline=clip(_guideline(kind, group, job, parameters, fixes, contrast), 20_000),
        action=clip(_action(group.ok, parameters), 4000),
        acceptance_criteria=list(most_common(
            tuple(c.outcome.acceptance_criteria) for c in group.ok))[:32],
        signature=SkillSignature(keywords=keywords(group), input_types=input_types(group.ok),
                                 output_types=output_types(job)),
        preconditions=Preconditions(input_types=input_types(group.ok, every=True),
                                    imports=imports[:64], keywords=keywords(group)),
        parameters=parameters, steps=_steps(group.ok), job=job, checks=common_checks(group.ok),
        recovery=[fix for fix, _ in fixes][:16] if kind == "subagent" else [],
        contrast=clip(contrast, 4000), tags=sorted({kind, *input_types(group.ok)})[:32],
        source_runs=bounded(sorted({c.outcome.run_id for c in group.ok + group.bad})))
    return Draft(group, pattern, template.sha)


def bounded(runs: list[str]) -> list[str]:
    """The newest ``MAX_SOURCE_RUNS`` source runs."""
    return runs[-MAX_SOURCE_RUNS:]


def _action(ok: list[Case], parameters: list[SkillParameter]) -> str:
    """The most common action, with each file's name replaced by ``{parameter}``."""
    files = [p.name for p in parameters if p.type == "file_path"]
    actions: list[str] = []
    for case in ok:
        action = case.outcome.action
        for name in files:
            value = case.arg(name)
            if isinstance(value, str) and value:
                action = action.replace(value, "{" + name + "}")
        actions.append(action)
    return most_common(actions)


def _steps(ok: list[Case]) -> list[SkillStep]:
    sequences = [tuple((s.agent, s.phase, s.detail) for s in c.outcome.steps) for c in ok]
    return [SkillStep(agent=a, phase=p, detail=d) for a, p, d in most_common(sequences)][:64]


def _description(group: Group, job: JobSpec, parameters: list[SkillParameter]) -> str:
    inputs = "/".join(input_types(group.ok)) or "no data file"
    outputs = ", ".join(job.expected_artifacts + job.expected_metrics) or "no declared output"
    names = ", ".join(p.name for p in parameters) or "no parameters"
    return (f"{most_common(c.outcome.action for c in group.ok)[:300]} — runs "
            f"{job.filename or 'an inline job'} on {inputs} with {names}; produces {outputs}. "
            f"Learnt from {len(group.ok)} successful and {len(group.bad)} failed tasks of type "
            f"{group.task_type}.")


def _context(group: Group, job: JobSpec) -> str:
    actions = sorted({c.outcome.action[:300] for c in group.ok})[:5]
    goals = sorted({g[:300] for c in group.ok if (g := c.outcome.goal)})[:3]
    runs = {c.outcome.run_id for c in group.ok + group.bad}
    lines = [f"Task type: {group.task_type}.",
             f"Grouped from {len(group.ok)} successful and {len(group.bad)} failed tasks "
             f"because they share the {group.grounds}.",
             "Actions: " + "; ".join(actions) + "."]
    if goals:
        lines.append("Goals: " + "; ".join(goals) + ".")
    lines.append("Inputs: " + (", ".join(input_types(group.ok)) or "none") + ".")
    lines.append("Outputs: " + (", ".join(output_types(job)) or "none declared") + ".")
    lines.append(f"Evidence: {len(group.ok)} successes, {len(group.bad)} failures in "
                 f"{len(runs)} run(s).")
    return "\n".join(lines)


def _guideline(kind: str, group: Group, job: JobSpec, parameters: list[SkillParameter],
               fixes: list[tuple[PatchChange, int]], contrast: str) -> str:
    script = job.filename or "the job"
    ranges = [f"- {p.name}: {p.description}" for p in parameters]
    if kind == "subagent":
        tried = [f"- {fix_text(fix, n)}" for fix, n in fixes[:16]]
        return "\n".join([
            f"You are the specialist for {group.task_type} tasks. Run {script} with the parameters "
            "given; when it fails, apply the change below that matches the failure, most "
            "proven first, one at a time:", *tried,
            "If none applies or none works, stop and report the failure with its evidence.",
            "Parameters:", *ranges])
    return "\n".join([f"Run {script} with parameters inside their ranges:", *ranges,
                      "Why:", contrast])
