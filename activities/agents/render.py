"""The user message of each agent role: the facts of one request, in a fixed order.

Only facts that are the same on every re-run of the same goal on the same data reach a
message: no run or task workflow ids, no times or durations, no peak memory, no absolute
paths (the sandbox's working directory is shown as ``.``). Long texts are cut at fixed
lengths, so the same request always renders to the same bytes. Data profiles (``profiles``,
by file name) are read by the activity from the store, like artifact previews; a message
given none has no profile section.
"""

from __future__ import annotations

from collections.abc import Sequence

from activities.agents.previews import Previews, Reused
from activities.agents.prompting import (
    bullets,
    checks_text,
    data_text,
    environment_text,
    failure_facts,
    fenced,
    head,
    job_text,
    message,
    named_text,
    profiles_section,
    sandbox_text,
    scrub,
    section,
    stderr_text,
    tail,
)
from activities.agents.studies import study_section
from activities.agents.study_facts import answer_section
from activities.profiles.stored import Profiles
from workflows.common.canonical import canonical_json
from workflows.common.cuts import keep
from workflows.contracts.context import TaskDigest
from workflows.contracts.roles import (
    CodeRequest,
    DebugFix,
    DebugRequest,
    DebugStrategy,
    ModelReviewRequest,
    PlanDraftOutput,
    PlanRequest,
    PlanReviewRequest,
    SummaryRequest,
)
from workflows.contracts.verdicts import Finding, ReviewVerdict

STDOUT_CHARS = 2000
DIAGNOSTIC_CHARS = 6000
SUMMARY_STDOUT_CHARS = 1500
METRICS_CHARS = 4000
MEMORY_NOTES = 20
MEMORY_NOTE_CHARS = 1000
FEEDBACK_CHARS = 2000
DIAGNOSIS_CHARS = 2000
ENVIRONMENT_NOTE = ("The packages installed where the job runs, with their versions: check "
                    "that what the job calls exists and behaves so in these versions.")
"""What a model reviewer is asked of the job environment's packages."""
STRATEGIES: dict[DebugStrategy, str] = {"direct": "from the error and the code",
              "introspect": "also shown the environment's packages",
              "diagnostic": "after running a script that printed the facts it needed"}
"""How each debugger came to its fix, as a reviewer of the fix is told."""


def plan_message(req: PlanRequest, profiles: Profiles | None = None,
                 reused: Reused | None = None) -> str:
    """The planner's facts: the goal, its data, what memory says, and a draft to revise.

    A study's cycle adds the study's context (:func:`study_section`, within its byte
    budget, with the reusable tasks' first lines ``reused``) after what memory says; a
    request without a study renders as it always did.
    """
    kept, cut = keep(req.memory, MEMORY_NOTES, what="memory note")
    notes = [head(n, MEMORY_NOTE_CHARS) for n in kept] + ([cut] if cut else [])
    revise = ""
    if req.previous is not None:
        revise = message(section("Your previous draft", fenced(draft_text(req.previous),
                                                                  "json")),
                         section("Feedback to address", bullets(
                             scrub(head(f, FEEDBACK_CHARS), run_id=req.run_id)
                             for f in req.feedback)))
    study = section("Study", study_section(req.study, reused=reused,
                                           timed=req.recording is None)) \
        if req.study is not None else ""
    return message(section("Goal", req.goal), section("Data files", data_text(req.data)),
                   profiles_section(profiles),
                   section("What earlier runs taught", bullets(notes)), study,
                   revise.strip())


def draft_text(draft: PlanDraftOutput) -> str:
    """A drafted plan as canonical JSON."""
    return canonical_json(draft.model_dump(mode="json"), spaced=True)


def plan_review_message(req: PlanReviewRequest, profiles: Profiles | None = None,
                        reused: Reused | None = None) -> str:
    """The plan reviewer's facts: the goal, its data (and its profiles) and the draft.

    A study's cycle adds the study as its planner saw it, told what to check (a request
    without a study renders as it always did).
    """
    study = section("Study", study_section(req.study, reused=reused, reader="plan_reviewer",
                                           timed=req.recording is None)) \
        if req.study is not None else ""
    return message(section("Goal", req.goal), section("Data files", data_text(req.data)),
                   profiles_section(profiles), study,
                   section("Draft plan", fenced(draft_text(req.draft), "json")))


def code_message(req: CodeRequest, shown: Previews | None = None,
                 environments: Sequence[str] = (), profiles: Profiles | None = None) -> str:
    """The coder's facts; the deep path adds why the last job failed.

    Both paths show the job's environment (its packages with their versions, when known)
    and the named environments a job may ask for (``environments``, beside ``base``), and
    each data file's profile (``profiles``).

    A dependent task's coder also reads what each dependency found (its digest and the
    first lines of its text artifacts, ``shown``); a task without dependencies gets no such
    section, so its message is as it always was. A task run as a subagent adds the
    subagent's instructions (bounded when matched); others get no such section either.
    """
    found = [section(f"What dependency {t.task_id} found", _digest(t, req.run_id, shown or {}))
             for t in req.upstream]
    found += [section(f"What earlier task {ref} wrote (reused, read-only)",
                      _reused(ref, req, shown or {}))
              for ref in dict.fromkeys(a.task_id for a in req.reused)]
    task = message(
        section("Research goal", req.goal or ""),
        section("Task", req.action),
        section("Acceptance criteria", bullets(req.acceptance_criteria)),
        section("Checks on metrics.json", checks_text(req.checks)),
        section("Input files in the working directory", bullets(req.input_names)),
        section("Data files", data_text(req.data)),
        profiles_section(profiles),
        section("Artifacts of finished dependencies (read-only)",
                bullets(req.dependency_artifacts)),
        *found,
        section("Instructions of the specialist this task runs as", req.instructions)
        if req.instructions else "")
    sandbox = section("Sandbox environment",
                      message(sandbox_text(req.environment),
                              named_text(environments, req.environment is not None)))
    if req.mode == "fast":
        return message(task.strip(), sandbox.strip(),
                       section("Mode", "fast: write the simplest correct job."))
    previous = job_text(req.previous_job) if req.previous_job is not None else ""
    return message(
        task.strip(),
        section("Mode", "deep: the previous job failed; fix the cause, not the symptom."),
        section("The previous job", previous),
        section("Why it failed", bullets(scrub(head(f, FEEDBACK_CHARS), run_id=req.run_id)
                                         for f in req.feedback)),
        sandbox)


def review_message(req: ModelReviewRequest, profiles: Profiles | None = None) -> str:
    """A model reviewer's facts: the task, its data's profiles, the job and the verdict.

    The environment's packages with their versions (``req.environment``) are shown as the
    coder saw them, when the task holds them. A debugger's fix (``req.fix``) adds which
    debugger wrote it and the failure it answers, as the debugger saw it. A request with
    neither renders as it always did.
    """
    review = req.review
    policy = review.policy
    limits = (f"memory_mb <= {policy.max_memory_mb}, timeout_s <= {policy.max_timeout_s:g}, "
              f"cpus <= {policy.max_cpus:g}")
    return message(
        section("Task", review.action),
        section("Acceptance criteria", bullets(review.acceptance_criteria)),
        section("Checks on metrics.json", checks_text(review.checks)),
        section("Input files in the working directory", bullets(review.input_names)),
        profiles_section(profiles),
        section("Artifacts of finished dependencies (read-only)",
                bullets(review.dependency_artifacts)),
        section("Policy limits", limits),
        section("Sandbox environment", message(ENVIRONMENT_NOTE, environment_text(
            req.environment))) if req.environment is not None else "",
        section("This job is a debugger's fix", fix_text(req.fix, req.run_id))
        if req.fix is not None else "",
        section("The job", job_text(review.job)),
        section(f"Deterministic {req.reviewer} review",
                verdict_text(req.deterministic, req.run_id)))


def fix_text(fix: DebugFix, run_id: str) -> str:
    """Who wrote a fix, the failure it answers and the debugger's diagnosis, to check it."""
    names = " and ".join(f"*{s}* ({STRATEGIES[s]})" for s in fix.strategies)
    one = len(fix.strategies) == 1
    wrote = "debugger" if one else "debuggers each"
    diagnosis = scrub(head(fix.diagnosis, DIAGNOSIS_CHARS), workspace=fix.failure.workspace,
                      run_id=run_id)
    return message(
        f"The task's previous job failed, and the {names} {wrote} rewrote it into the job "
        f"below{'' if one else ' (the same code)'}. Check that the fix addresses the cause "
        "of that failure, not only its symptom, and that the job still does what the task "
        "asks.",
        bullets([*failure_facts(fix.failure, run_id),
                 f"the debugger's diagnosis: {diagnosis or '(none)'}"]),
        "stderr of the failed job (tail):\n" + stderr_text(fix.failure, run_id)).strip()


def verdict_text(verdict: ReviewVerdict, run_id: str = "") -> str:
    """A deterministic verdict: its decision, the checks it ran and its findings."""

    def finding(f: Finding) -> str:
        where = f" (line {f.line})" if f.line is not None else ""
        return f"[{f.code}]{where} {scrub(f.message, run_id=run_id)}"

    checks = ", ".join(f"{name}={'pass' if ok else 'fail'}"
                       for name, ok in sorted(verdict.checks.items()))
    return message(
        f"Verdict: {verdict.verdict} (confidence {verdict.confidence:.2f})",
        f"Checks: {checks or '(none)'}",
        "Critical findings:\n" + (bullets(map(finding, verdict.critical)) or "(none)"),
        "Warnings:\n" + (bullets(map(finding, verdict.warnings)) or "(none)")).strip()


def debug_message(req: DebugRequest) -> str:
    """A debugger's facts: the task, the job that failed and how it failed."""
    outcome = req.outcome

    def clean(text: str) -> str:
        return scrub(text, workspace=outcome.workspace, run_id=req.run_id)

    artifacts = canonical_json(sorted(a.name for a in outcome.artifacts), spaced=True)
    metrics = head(canonical_json(outcome.metrics, spaced=True), METRICS_CHARS)
    failure = bullets([
        *failure_facts(outcome, req.run_id),
        f"output truncated by the sandbox: {'yes' if outcome.output_truncated else 'no'}",
        f"artifacts left: {artifacts}",
        f"metrics.json: {clean(metrics)}",
        f"metrics.json problem: {clean(outcome.metrics_error or '') or '(none)'}",
    ])
    parts = [
        section("Task", req.action),
        section("Acceptance criteria", bullets(req.acceptance_criteria)),
        section("Checks on metrics.json", checks_text(req.checks)),
        section("Input files in the working directory", bullets(req.input_names)),
        section("The job that failed", job_text(req.job)),
        section("How it failed", failure),
        section("stderr (tail)", stderr_text(outcome, req.run_id)),
        section("stdout (tail)", fenced(clean(tail(outcome.stdout_tail, STDOUT_CHARS)))),
    ]
    if req.strategy == "introspect" or (req.strategy == "diagnostic"
                                        and req.environment is not None):
        parts.append(section("Sandbox environment", environment_text(req.environment)))
    if req.strategy == "diagnostic":
        stage = ("Write a diagnostic script first." if req.diagnostic_output is None
                 else "Your diagnostic script ran; now fix the job.")
        parts.append(section("Stage", stage))
        if req.diagnostic_script is not None:
            parts.append(section("Your diagnostic script", message(
                f"What you said it would tell you: {clean(req.diagnostic_purpose) or '(none)'}",
                fenced(head(req.diagnostic_script, DIAGNOSTIC_CHARS), "python")).strip()))
        if req.diagnostic_output is not None:
            parts.append(section("Diagnostic output", fenced(
                clean(tail(req.diagnostic_output, DIAGNOSTIC_CHARS)))))
    return message(*parts)


def summary_message(req: SummaryRequest, shown: Previews | None = None,
                    profiles: Profiles | None = None) -> str:
    """The output processor's facts: the goal and each task's verified results.

    Each task's text artifacts show their first lines where they were read (``shown``).
    """
    study = section("Study", answer_section(req.study, req.testing)) if req.study else ""
    return message(section("Goal", req.goal), study, profiles_section(profiles),
                   *(section(f"Task {t.task_id}", _digest(t, req.run_id, shown or {}))
                     for t in req.tasks))


def _digest(task: TaskDigest, run_id: str, shown: Previews) -> str:
    out = scrub(tail(task.stdout_tail, SUMMARY_STDOUT_CHARS), run_id=run_id)
    metrics = head(canonical_json(task.metrics, spaced=True), METRICS_CHARS)
    firsts = [f"{name}:\n{fenced(scrub(shown[(task.task_id, name)], run_id=run_id))}"
              for name in task.artifacts if (task.task_id, name) in shown]
    return message(
        bullets([f"action: {task.action}", f"status: {task.status}",
                 f"status reason: {scrub(task.status_reason, run_id=run_id) or '(none)'}",
                 f"metrics: {scrub(metrics, run_id=run_id)}",
                 f"artifacts: {canonical_json(task.artifacts, spaced=True)}",
                 *task.omitted]),
        "Checks:\n" + (bullets(task.checks) or "(none)"),
        "stdout (tail):\n" + fenced(out),
        ("First lines of its text artifacts:\n\n" + "\n\n".join(firsts)) if firsts
        else "").strip()


def _reused(ref: str, req: CodeRequest, shown: Previews) -> str:
    """An earlier cycle's reused task: its files, with the first lines of the text ones."""
    files = [a.name for a in req.reused if a.task_id == ref]
    firsts = [f"deps/{ref}/{name}:\n{fenced(scrub(shown[(ref, name)], run_id=req.run_id))}"
              for name in files if (ref, name) in shown]
    listed = bullets(f"deps/{ref}/{name}" for name in files)
    return message(listed, ("First lines of its text files:\n\n" + "\n\n".join(firsts))
                   if firsts else "").strip()
