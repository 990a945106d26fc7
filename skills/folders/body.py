"""The Markdown body of an exported ``SKILL.md``: what the skill does, when, how, and whence.

The side file carries the pattern for Assay; the body is for the person or agent reading
the folder. It is rendered from the pattern alone, so exporting the same skill twice writes the
same bytes, and an import ignores it for Assay's own folders (the pattern wins).
"""

from __future__ import annotations

from skills.folders.limits import SCRIPTS, script_name
from workflows.contracts.patterns import Skill, SkillPattern


def render_body(skill: Skill) -> str:
    """The readable Markdown of an exported skill (what, when, how, and where it came from)."""
    p = skill.pattern
    sections = [f"# {p.name}\n\n{p.description}", _when(p), _parameters(p), _outputs(p),
                _text("Instructions" if p.kind == "subagent" else "Guideline", p.guideline),
                _text("Why it works", p.contrast), _recovery(p), _steps(p), _run(p),
                _provenance(skill)]
    return "\n\n".join(s for s in sections if s) + "\n"


def _text(title: str, text: str) -> str:
    return f"## {title}\n\n{text.strip()}" if text.strip() else ""


def _bullets(title: str, lines: list[str]) -> str:
    return f"## {title}\n\n" + "\n".join(f"- {line}" for line in lines) if lines else ""


def _when(p: SkillPattern) -> str:
    lines: list[str] = []
    if p.preconditions.input_types:
        lines.append(f"Needs one data file of each type: {', '.join(p.preconditions.input_types)}")
    if p.preconditions.keywords:
        lines.append(f"The goal or action mentions one of: {', '.join(p.preconditions.keywords)}")
    if p.preconditions.imports:
        lines.append(f"The job imports: {', '.join(p.preconditions.imports)}")
    if p.action:
        lines.append(f"Task action: {p.action}")
    text = "\n".join(f"- {line}" for line in lines)
    body = "\n\n".join(t for t in (p.context.strip(), text) if t)
    return f"## When to use it\n\n{body}" if body else ""


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


def _parameters(p: SkillPattern) -> str:
    if not p.parameters:
        return ""
    rows = ["| Name | Type | Default | Range or options | Description |",
            "| --- | --- | --- | --- | --- |"]
    for param in p.parameters:
        if param.options:
            limits = ", ".join(str(o) for o in param.options)
        elif param.extensions:
            limits = ", ".join(f".{e}" for e in param.extensions)
        else:
            low = "" if param.minimum is None else _number(param.minimum)
            high = "" if param.maximum is None else _number(param.maximum)
            limits = f"{low} .. {high}" if low or high else ""
        kind = param.type if param.target == "arg" else f"{param.type} (data input)"
        rows.append("| " + " | ".join(_cell(v) for v in (
            param.name, kind, param.default, limits, param.description)) + " |")
    return "## Parameters\n\n" + "\n".join(rows)


def _outputs(p: SkillPattern) -> str:
    lines: list[str] = []
    if p.job is not None and p.job.expected_artifacts:
        lines.append("Artifacts: " + ", ".join(f"`{a}`" for a in p.job.expected_artifacts))
    if p.job is not None and p.job.expected_metrics:
        lines.append("Metrics: " + ", ".join(f"`{m}`" for m in p.job.expected_metrics))
    lines += [f"Check: `{c.describe()}`" for c in p.checks]
    lines += [f"Accepted when: {c}" for c in p.acceptance_criteria]
    return _bullets("Expected outputs and checks", lines)


def _recovery(p: SkillPattern) -> str:
    lines = [f"`{c.field}`: {c.old_value!r} -> {c.new_value!r}" + (f" ({c.reason})" if c.reason
                                                                    else "") for c in p.recovery]
    return _bullets("Fixes that worked before", lines)


def _steps(p: SkillPattern) -> str:
    lines = [f"{i}. {s.agent} ({s.phase})" + (f": {s.detail}" if s.detail else "")
             for i, s in enumerate(p.steps, 1)]
    return "## Steps\n\n" + "\n".join(lines) if lines else ""


def _run(p: SkillPattern) -> str:
    if p.job is None:
        return ""
    filename = script_name(p.job)
    flags = " ".join(f"--{k}={v}" for k, v in p.job.args.items())
    command = f"python {SCRIPTS}/{filename} {flags}".rstrip()
    return (f"## How to run\n\nFrom the folder holding the data files:\n\n```\n{command}\n```\n\n"
            "The job writes `metrics.json` and its artifacts in the working directory.")


def _provenance(skill: Skill) -> str:
    p, m = skill.pattern, skill.metrics
    lines = [f"Version {p.version}, {p.kind}, status {skill.status}, origin {skill.origin}, "
             f"confidence {skill.confidence:g}",
             f"Used {m.used} times ({m.succeeded} succeeded) of {m.retrieved} retrievals; "
             f"extracted from {m.evidence_successes} successes and {m.evidence_failures} failures"]
    if p.source_runs:
        lines.append(f"Source runs: {', '.join(p.source_runs)}")
    if p.tags:
        lines.append(f"Tags: {', '.join(p.tags)}")
    return _bullets("Provenance", lines)
