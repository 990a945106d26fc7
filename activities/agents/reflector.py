"""The reflector role: a job-spec patch for a failure the rule table cannot name.

Its message shows the failure as reflection saw it (the task, the job, how it failed, the
rule table's note, the patches already tried, the policy's ceilings). Its answer becomes a
:class:`~activities.reflection.rules.Diagnosis` whose changes are arguments and resources
only, and is then scored and guarded by reflection's one path
(:func:`activities.reflection.reflection.scored`): the same confidence and risk formulas, the
same guardrails, the same thresholds. A change outside ``args``/``resources`` or one the
guardrails refuse is kept in the note as refused; the note then carries no patch.
"""

from __future__ import annotations

import hashlib
from typing import Any

from activities.agents.prompting import (
    bullets,
    checks_text,
    fenced,
    job_text,
    message,
    scrub,
    section,
    stderr_text,
    tail,
)
from activities.patches.apply import RESOURCE_FIELDS
from activities.reflection.reflection import diagnosis_of, scored
from activities.reflection.rules import Diagnosis
from workflows.common.canonical import canonical_json
from workflows.contracts.reflection import DiagnoseInput, PatchChange, ReflectionNote
from workflows.contracts.reflector import ReflectorOutput, ReflectRequest

KNOWN_ROOT_CAUSES = (
    "out_of_memory", "timeout", "missing_dependency", "dependency_version",
    "sandbox_violation", "unsafe_code", "code_error", "missing_input_file", "missing_key",
    "index_out_of_range", "invalid_value", "type_error", "division_by_zero",
    "assertion_failed", "permission_denied", "missing_artifact", "missing_metric",
    "invalid_metrics", "invalid_artifact", "acceptance_not_met")
"""The rule table's root causes: naming one of them is a known pattern (+0.25 confidence)."""
STDOUT_CHARS = 2000
ROLE = "reflector"


def reflect_message(req: ReflectRequest) -> str:
    """The reflector's facts: the task, the job, how it failed, what the rule table said."""
    failure = req.failure
    policy = failure.policy
    tried = [canonical_json([c.model_dump(mode="json") for c in p.changes], spaced=True)
             for p in failure.previous_patches]
    return message(
        section("Task", failure.action),
        section("Checks on metrics.json", checks_text(failure.checks)),
        section("The job that failed", job_text(failure.job)),
        section(f"How it failed ({failure.kind}, attempt {failure.attempt})",
                _how_it_failed(failure, req.run_id)),
        section("The rule table's note", _note_text(req)),
        section("Patches already tried (never propose one again)", bullets(tried)),
        section("Policy ceilings", bullets([
            f"resources.memory_mb: never above the job's {failure.job.resources.memory_mb}",
            f"resources.timeout_s: at most {policy.max_timeout_s:g}",
            f"resources.cpus: at most {policy.max_cpus:g}"])),
        section("Known root causes", ", ".join(KNOWN_ROOT_CAUSES)),
    )


def _note_text(req: ReflectRequest) -> str:
    """The rule table's diagnosis and evidence, without what it alone would decide.

    That decision (the task ending deferred) is not what follows: the reflector's answer,
    and then the debuggers, come first.
    """
    note, outcome = req.note, req.failure.outcome

    def clean(text: str) -> str:
        return scrub(text, workspace=outcome.workspace if outcome else "", run_id=req.run_id)

    patched = ("with a patch the guardrails passed" if note.patch is not None
               else "with no patch of its own")
    return bullets([f"root cause: {note.root_cause}",
                    f"reason: {clean(diagnosis_of(note, req.failure.run_id))}",
                    f"its confidence: {note.confidence:.2f}, {patched}",
                    *map(clean, note.evidence)])


def _how_it_failed(failure: DiagnoseInput, run_id: str) -> str:
    outcome = failure.outcome
    lines: list[str] = []
    if outcome is not None:
        def clean(text: str) -> str:
            return scrub(text, workspace=outcome.workspace, run_id=run_id)

        lines += [
            bullets([f"outcome: {outcome.outcome}", f"exit code: {outcome.exit_code}",
                     f"reason: {clean(outcome.reason) or '(none)'}"]),
            "stderr (tail):\n" + stderr_text(outcome, run_id),
            "stdout (tail):\n" + fenced(clean(tail(outcome.stdout_tail, STDOUT_CHARS)))]
    if failure.verification is not None:
        lines.append(f"verification: {failure.verification.summary}")
    findings = [f"{v.reviewer}: {v.verdict} {'; '.join(f.message for f in v.critical)}"
                for v in failure.verdicts
                if v.verdict != "APPROVE"]
    if findings:
        lines.append("review: " + " | ".join(findings))
    return "\n\n".join(lines)


def reflector_note(req: ReflectRequest, out: ReflectorOutput) -> ReflectionNote:
    """The reflector's answer as a note: guarded and scored like the rule table's."""
    failure = req.failure
    changes = [PatchChange(field=c.field, old_value=_current(failure, c.field),
                           new_value=c.value, reason=c.reason) for c in out.changes]
    outside = [c.field for c in changes if not _in_scope(c.field)]
    found = Diagnosis(root_cause=out.root_cause, likely_fix=out.likely_fix,
                      reason=f"the reflector: {out.reason}",
                      evidence=[f"rule table: {req.note.reason}"],
                      known=out.root_cause in KNOWN_ROOT_CAUSES, changes=changes)
    if outside:
        refusal = (f"the reflector's patch touches {', '.join(outside)}: it may change only "
                   "args.<name> and resources.memory_mb/timeout_s/cpus; code changes are "
                   "the debuggers'")
        found.changes = []
        found.reason += f"; patch refused: {refusal}"
        found.evidence.append(f"guardrail: {refusal}")
    return scored(failure, found, origin="model", note_id=reflector_note_id(req))


def reflector_note_id(req: ReflectRequest) -> str:
    """The reflector note's id: its own, beside the rule table's note on the same failure."""
    f = req.failure
    key = f"{f.run_id}/{f.task_id}/{f.kind}/{f.attempt}/{ROLE}"
    return "ref-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def _in_scope(field: str) -> bool:
    head, _, name = field.partition(".")
    return (head == "args" and bool(name)) or (head == "resources" and name in RESOURCE_FIELDS)


def _current(failure: DiagnoseInput, field: str) -> Any:
    """The job's value at ``field`` (what the patch expects to replace); None if absent."""
    head, _, name = field.partition(".")
    if head == "args":
        return failure.job.args.get(name)
    if head == "resources" and name in RESOURCE_FIELDS:
        return getattr(failure.job.resources, name)
    return None
