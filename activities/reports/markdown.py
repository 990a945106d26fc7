"""The Markdown report of a run: a pure function of its results JSON.

``assay report RUN`` renders the same Markdown from the results JSON the run wrote (or, when
that file cannot be read, from the run's workflow result, without the tasks' detail).
"""

from __future__ import annotations

from activities.reports.branches import markdown_section as branches_section
from activities.reports.checkpoints import markdown_section as checkpoints_section
from activities.reports.claims import flagged_line
from activities.reports.figures import mermaid
from activities.reports.kpis import markdown as kpi_lines
from activities.reports.large import capped, is_large, render_large
from activities.reports.numbers import duration
from activities.reports.sweeps import sweep_markdown
from activities.reports.tasks import (
    isolation_parts,
    link,
    one_line,
    quoted,
    task_seconds,
    task_section,
)
from workflows.contracts.results import RunReport, TaskResult
from workflows.contracts.spend import ModelSpend, Usage

SKIPPED_SHOWN = 50
"""Artifacts not copied that the report lists by name."""
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
    """The human-readable report of a run (a large run's: summary tables, ``large``)."""
    if is_large(result):
        return render_large(result, [*_head(result), *_goal_section(result),
                                     *capped(_answer_section(result))])
    lines = [
        *_head(result),
        *_isolation_lines(result.tasks),
        *_goal_section(result),
        *_answer_section(result),
        *_overview_section(result),
        *branches_section(result),
        *checkpoints_section(result),
        *(["", "## Sweeps", "", "Every line of each group of branches: what it changed, its "
            "metrics with their intervals, its status and cost, and which line was kept and "
            "why.", *sweep_markdown(result.sweeps)] if result.sweeps else []),
        "",
        "## Completion by priority",
        "",
        "| priority | completed | total | rate |",
        "| --- | --- | --- | --- |",
    ]
    for priority, row in result.completion_by_priority.items():
        lines.append(f"| {priority} | {int(row['completed'])} | {int(row['total'])} "
                     f"| {row['rate']:.0%} |")
    lines += _priority_scores(result)
    if result.kpis is not None:
        lines += ["", "## Planning KPIs", "", *kpi_lines(result.kpis)]
    for gate in result.gates:
        lines += ["", f"Plan gate: {gate.decided_text()}"]
    lines += _model_section(result)
    lines += _reflection_section(result)
    lines += _skills_section(result)
    lines += ["", "## Tasks", ""]
    kept = result.files.artifacts
    for task in result.tasks:
        lines += task_section(task, {k.name: k for k in kept if k.task_id == task.task_id},
                              isolation=isolation_parts(result.tasks, task.task_id)[1])
    lines += _files_section(result)
    return "\n".join(lines) + "\n"


def _head(result: RunReport) -> list[str]:
    """The report's title and the run's status, reason, time and plan."""
    done = sum(t.status == "completed" for t in result.tasks)
    run_time = (result.finished_at - result.started_at).total_seconds()
    lines = [
        f"# Execution summary — {result.plan_name}",
        "",
        f"- Run: `{result.run_id}`",
        *([f"- Execution: `{result.execution}`, a reset of `{result.first_execution}`"
           " (`temporal workflow reset`)"] if result.reset() else []),
        f"- Status: **{result.status}** ({done}/{len(result.tasks)} tasks completed)",
    ]
    if result.status_reason:
        lines.append(f"- Reason: {one_line(result.status_reason)}")
    return [*lines,
            f"- Started: {result.started_at.isoformat()} — finished: "
            f"{result.finished_at.isoformat()} (took {duration(run_time)})",
            *_plan_lines(result)]


def _priority_scores(result: RunReport) -> list[str]:
    """The tasks whose priority was computed (the plan gave none): score and reasons."""
    if not result.priority_scores:
        return []
    lines = ["", "Priorities computed where the plan gave none (HIGH ≥ 50, MEDIUM ≥ 25):", ""]
    for task_id, score in result.priority_scores.items():
        why = "; ".join(score.reasons) or "no criterion met"
        lines.append(f"- `{task_id}`: {score.level}, score {score.score} ({why})")
    return lines


def _plan_lines(result: RunReport) -> list[str]:
    """The plan's digest (of its canonical JSON), and who supplied it when a person did.

    A goal the model planned has only the goal's digest (of the goal and its data).
    """
    supplied = result.supplied_plan
    if supplied is None:
        what = "Goal sha256" if result.goal is not None else "Plan sha256 (canonical JSON)"
        return [f"- {what}: `{result.plan_sha256}`"]
    by = f"`{_code(supplied.by)}`" if supplied.by.strip() else "an unnamed person"
    name = f" (`{_code(supplied.name)}`)" if supplied.name else ""
    return [f"- Plan sha256 (canonical JSON): `{supplied.sha256}`{name}, supplied by {by}",
            f"- Goal sha256: `{result.plan_sha256}`"]


def _code(text: str) -> str:
    """Text for an inline code span: on one line, without backticks."""
    return one_line(text).replace("`", "'")


def _isolation_lines(tasks: list[TaskResult]) -> list[str]:
    """How the jobs were isolated, once for the run; the tasks whose isolation differs."""
    common, _ = isolation_parts(tasks)
    if common is None:
        return []
    lines = [f"- Isolation (every task that ran): {common or 'differs by task'}"]
    differ = [t.task_id for t in tasks if isolation_parts(tasks, t.task_id)[1]]
    if differ:
        lines.append(f"- What differs by task (such as limits) is in the sections of "
                     f"{', '.join(f'`{tid}`' for tid in differ)}")
    return lines


def _overview_section(result: RunReport) -> list[str]:
    """Every task in one table, the timeline figure and the DAG (or why there is none)."""
    if not result.tasks:
        return ["", "No task was made (the run ended before its plan ran), so there is no "
                "timeline figure."]
    lines = ["", "## Overview", "",
             "| task | priority | status | time | job runs | job by |",
             "| --- | --- | --- | ---: | ---: | --- |"]
    for task in result.tasks:
        seconds = task_seconds(task)
        took = duration(seconds) if seconds is not None else "—"
        lines.append(f"| `{task.task_id}` | {task.priority} | {task.status} | {took} "
                     f"| {task.provenance.execution.attempts} | {task.provenance.job_author} |")
    for figure in result.files.figures:
        lines += ["", f"!{link('Timeline of the tasks by phase', figure)}"]
    if result.files.events:
        lines += ["", f"Every event, nested run → task → phase → attempt or debugger: "
                      f"{link(result.files.events, result.files.events)}."]
    return [*lines, "", *mermaid(result)]


def _files_section(result: RunReport) -> list[str]:
    """What the report folder holds, and the artifacts that were not copied into it."""
    files = result.files
    if not (files.artifacts or files.skipped):
        return []
    total = sum(k.size for k in files.artifacts)
    lines = ["## Files", "",
             f"{len(files.artifacts)} verified artifact(s), {total:,} bytes, are copied under "
             "`artifacts/<task>/` beside this summary, the results JSON and `ledger.jsonl`."]
    if files.skipped:
        lines += ["", "Not copied:", ""]
        lines += [f"- {one_line(why)}" for why in files.skipped[:SKIPPED_SHOWN]]
        if len(files.skipped) > SKIPPED_SHOWN:
            lines.append(f"- … and {len(files.skipped) - SKIPPED_SHOWN} more")
    return [*lines, ""]


def _goal_section(result: RunReport) -> list[str]:
    if not result.goal:
        return []
    return ["", "## Goal", "", *quoted(result.goal)]


def _answer_section(result: RunReport) -> list[str]:
    answer = result.answer
    if answer is None:
        return []
    lines = ["", "## Answer", ""]
    if result.answer_by:
        lines += [f"Written by the {one_line(result.answer_by)}.", ""]
    lines += quoted(answer.answer)
    if result.answer_unheld:
        lines += ["", f"**{flagged_line(result.answer_unheld)}**"]
    if answer.analysis:
        lines += ["", "### Analysis", "", *quoted(answer.analysis)]
    if answer.caveats:
        lines += ["", "### Caveats", ""]
        lines += [f"- {one_line(caveat)}" for caveat in answer.caveats]
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
    lines.extend(f"- Pattern {p.kind} `{p.key}` (seen {p.count} times): {one_line(p.detail)}"
                 for p in r.patterns)
    lines.extend(f"- Note: {one_line(w)}" for w in r.warnings[:20])
    if not learned and any(t.skill_report and t.skill_report.reported for t in result.tasks):
        lines.append("- Memory learns from these tasks after they end, off their path: "
                     "`assay memory rules` and `assay memory templates` show what it kept")
    return lines


SKILL_REASONS_SHOWN = 20
"""Tasks (or the goal) whose reason for using no skill the report lists; the rest are counted."""


def _skills_section(result: RunReport) -> list[str]:
    """Which skill each task ran from, and why a skill did not apply where none did."""
    s = result.skills
    if not (s.applied or s.reasons or s.fell_back or s.guided):
        return []
    lines = ["", "## Skills", ""]
    lines += [f"- `{tid}`: ran skill `{sid}`" for tid, sid in sorted(s.applied.items())]
    lines += [f"- `{who}`: prompted with guideline skill(s) "
              f"{', '.join(f'`{g}`' for g in ids)}" for who, ids in sorted(s.guided.items())]
    why = sorted(s.reasons.items())
    lines += [f"- `{key}`: no skill applied — {one_line(reason)[:500]}"
              for key, reason in why[:SKILL_REASONS_SHOWN]]
    if len(why) > SKILL_REASONS_SHOWN:
        lines.append(f"- … and {len(why) - SKILL_REASONS_SHOWN} more without a skill, "
                     "listed in the results JSON")
    if s.fell_back:
        lines.append(f"- Fell back to planning: {one_line(s.fell_back)[:500]}")
    return lines


def _spend_row(what: str, calls: int, usage: Usage) -> str:
    return (f"| {what} | {calls} | {usage.input_tokens:,} | {usage.output_tokens:,} "
            f"| {usage.cache_creation_input_tokens:,} | {usage.cache_read_input_tokens:,} "
            f"| {usage.cost_usd:.4f} |")
