"""The Markdown report of a run: a pure function of its results JSON.

``assay report RUN`` renders the same Markdown from the results JSON the run wrote (or, when
that file cannot be read, from the run's workflow result, without the tasks' detail).
"""

from __future__ import annotations

from workflows.agents.spend import ModelSpend, Usage
from workflows.contracts.results import RunReport, TaskResult

_SPEND_HEADER = ["| {what} | calls | input | output | cache write | cache read | cost (USD) |",
                 "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]


def describe_spend(spend: ModelSpend) -> str:
    """Model use in one line: calls, tokens (input, output, cache write, cache read), cost."""
    usage = spend.usage
    text = (f"{spend.calls} model call{'s' if spend.calls != 1 else ''}, "
            f"{usage.input_tokens:,} input / {usage.output_tokens:,} output / "
            f"{usage.cache_creation_input_tokens:,} cache-write / "
            f"{usage.cache_read_input_tokens:,} cache-read tokens, ${usage.cost_usd:.4f}")
    if usage.unpriced_models:
        text += f" (no price known for {', '.join(usage.unpriced_models)})"
    return text


def render_markdown(result: RunReport) -> str:
    """The human-readable report of a run."""
    done = sum(t.status == "completed" for t in result.tasks)
    lines = [
        f"# Execution summary — {result.plan_name}",
        "",
        f"- Run: `{result.run_id}`",
        f"- Status: **{result.status}** ({done}/{len(result.tasks)} tasks completed)",
    ]
    if result.status_reason:
        lines.append(f"- Reason: {_one_line(result.status_reason)}")
    lines += [
        f"- Started: {result.started_at.isoformat()} — finished: {result.finished_at.isoformat()}",
        f"- Plan sha256: `{result.plan_sha256}`",
        *_goal_section(result),
        *_answer_section(result),
        "",
        "## Completion by priority",
        "",
        "| priority | completed | total | rate |",
        "| --- | --- | --- | --- |",
    ]
    for priority, row in result.completion_by_priority.items():
        lines.append(f"| {priority} | {int(row['completed'])} | {int(row['total'])} "
                     f"| {row['rate']:.0%} |")
    for gate in result.gates:
        lines += ["", f"Plan gate: {gate.status} by {gate.by}"
                  + (f" — {gate.comment}" if gate.comment else "")]
    lines += _model_section(result)
    lines += _reflection_section(result)
    lines += _skills_section(result)
    lines += ["", "## Tasks", ""]
    for task in result.tasks:
        lines += _task_section(task)
    return "\n".join(lines) + "\n"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _quoted(text: str) -> list[str]:
    """Text as a Markdown block quote, so its own markup cannot break the report's layout."""
    return [f"> {line}".rstrip() for line in text.splitlines()]


def _goal_section(result: RunReport) -> list[str]:
    if not result.goal:
        return []
    return ["", "## Goal", "", *_quoted(result.goal)]


def _answer_section(result: RunReport) -> list[str]:
    answer = result.answer
    if answer is None:
        return []
    lines = ["", "## Answer", "", *_quoted(answer.answer)]
    if answer.analysis:
        lines += ["", "### Analysis", "", *_quoted(answer.analysis)]
    if answer.caveats:
        lines += ["", "### Caveats", ""]
        lines += [f"- {_one_line(caveat)}" for caveat in answer.caveats]
    return lines


def _model_section(result: RunReport) -> list[str]:
    """Model use: the run's totals, a row per task and a row per role (none if no calls)."""
    spend = result.model
    if spend.calls == 0 and not any(t.model.calls for t in result.tasks):
        return []
    lines = ["", "## Model use", "", f"Total: {describe_spend(spend)}.", ""]
    lines += [_SPEND_HEADER[0].format(what="task"), _SPEND_HEADER[1]]
    lines += [_spend_row(f"`{t.task_id}`", t.model.calls, t.model.usage) for t in result.tasks
              if t.model.calls]
    if spend.by_role:
        lines += ["", _SPEND_HEADER[0].format(what="role"), _SPEND_HEADER[1]]
        lines += [_spend_row(role, spend.calls_by_role.get(role, 0), usage)
                  for role, usage in sorted(spend.by_role.items())]
    return lines


def _reflection_section(result: RunReport) -> list[str]:
    """Patterns found, patches and their success, and what memory learned or supplied."""
    r = result.reflection
    learned = [*r.rules_promoted, *r.rules_demoted, *r.templates_cached]
    if not (r.patterns or r.patches_applied or r.rules_applied or learned
            or r.templates_used or r.misses or r.warnings):
        return []
    lines = ["", "## Reflection", "",
             f"- Patches applied: {r.patches_applied} ({r.patches_succeeded} in tasks that "
             "completed)"]
    named = (("Rules applied at intake", r.rules_applied),
             ("Rules promoted", r.rules_promoted), ("Rules validated", r.rules_validated),
             ("Rules demoted", r.rules_demoted), ("Templates cached", r.templates_cached),
             ("Templates used", r.templates_used))
    lines.extend(f"- {label}: {', '.join(f'`{i}`' for i in ids)}" for label, ids in named if ids)
    if r.misses:
        lines.append(f"- Reflection or memory missed {r.misses} time(s); those tasks went on "
                     "without its advice")
    lines.extend(f"- Pattern {p.kind} `{p.key}` (seen {p.count} times): {_one_line(p.detail)}"
                 for p in r.patterns)
    lines.extend(f"- Note: {_one_line(w)}" for w in r.warnings[:20])
    return lines


SKILL_REASONS_SHOWN = 20
"""Tasks (or the goal) whose reason for using no skill the report lists; the rest are counted."""


def _skills_section(result: RunReport) -> list[str]:
    """Which skill each task ran from, and why a skill did not apply where none did."""
    s = result.skills
    if not (s.applied or s.reasons or s.fell_back):
        return []
    lines = ["", "## Skills", ""]
    lines += [f"- `{tid}`: ran skill `{sid}`" for tid, sid in sorted(s.applied.items())]
    why = sorted(s.reasons.items())
    lines += [f"- `{key}`: no skill applied — {_one_line(reason)[:500]}"
              for key, reason in why[:SKILL_REASONS_SHOWN]]
    if len(why) > SKILL_REASONS_SHOWN:
        lines.append(f"- … and {len(why) - SKILL_REASONS_SHOWN} more without a skill, "
                     "listed in the results JSON")
    if s.fell_back:
        lines.append(f"- Fell back to planning: {_one_line(s.fell_back)[:500]}")
    return lines


def _spend_row(what: str, calls: int, usage: Usage) -> str:
    return (f"| {what} | {calls} | {usage.input_tokens:,} | {usage.output_tokens:,} "
            f"| {usage.cache_creation_input_tokens:,} | {usage.cache_read_input_tokens:,} "
            f"| {usage.cost_usd:.4f} |")


def _task_section(task: TaskResult) -> list[str]:
    lines = [
        f"### Task {task.task_id} [{task.priority}] — {task.status}",
        "",
        f"{task.action}",
        "",
        f"- Reason: {task.status_reason}",
        f"- Job by: {task.provenance.job_author}"
        + (f"; memory rules {', '.join(task.provenance.memory_rules)}"
           if task.provenance.memory_rules else ""),
        f"- Attempts: review {task.provenance.approval.attempts}, execution "
        f"{task.provenance.execution.attempts}, verification "
        f"{task.provenance.verification.attempts}",
    ]
    if task.execution is not None:
        lines.append(f"- Run: {task.execution.outcome} in {task.execution.duration_s:.2f} s, "
                     f"peak memory {task.execution.peak_memory_mb:.0f} MB, "
                     f"isolation: {task.execution.isolation or 'n/a'}")
    for verdict in task.verdicts:
        flags = "; ".join(f.message for f in verdict.critical) or "no critical flags"
        lines.append(f"- Review {verdict.reviewer}: {verdict.verdict} "
                     f"({verdict.confidence:.2f}) — {flags}")
    for note in task.reflections:
        lines.append(f"- Reflection `{note.note_id}`: {note.root_cause} → {note.likely_fix} "
                     f"(confidence {note.confidence:.2f}, {note.decision})")
    for patch in task.provenance.patches:
        changes = ", ".join(f"`{c.field}` {c.old_value!r} → {c.new_value!r}" for c in patch.changes)
        lines.append(f"- Patch `{patch.patch_id}` ({patch.root_cause}; risk {patch.risk:.2f}, "
                     f"confidence {patch.confidence:.2f}): {changes} — {patch.outcome}")
    for gate in task.provenance.approvals:
        lines.append(f"- Gate {gate.gate}: {gate.status} by {gate.by}"
                     + (f" — {gate.comment}" if gate.comment else ""))
    if task.metrics:
        shown = ", ".join(f"`{k}` = {v!r}" for k, v in sorted(task.metrics.items())[:12])
        lines.append(f"- Metrics: {shown}")
    for check in task.checks:
        mark = "pass" if check.passed else f"FAIL ({check.reason})"
        lines.append(f"- Check `{check.check.describe()}`: {mark}")
    for artifact in task.artifacts:
        lines.append(f"- Artifact `{artifact.name}` ({artifact.size} bytes, "
                     f"sha256 `{artifact.sha256[:16]}…`): {artifact.path}")
    unlisted = task.artifact_count() - len(task.artifacts)
    if unlisted > 0:
        lines.append(f"- … and {unlisted} more artifacts, not listed here")
    if task.omitted:
        where = f"`{task.detail}`, which" if task.detail else "the file the task wrote, which"
        lines.append(f"- Cut from the task's result ({'; '.join(task.omitted)}): "
                     f"{where} this report could not read, and the task's events have the rest")
    return [*lines, ""]
