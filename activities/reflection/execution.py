"""Rules for a job that failed while it ran (execution retry, phase 5.5).

Matched on the sandbox's classified outcome (``ExecutionOutcome.outcome``) first; stderr only
adds evidence (the module that is missing, the exception that ended the job). Only the job
spec's work arguments and time limit are ever patched: code and memory are a person's call.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from activities.reflection.rules import (
    ITERATION_EXAMPLES,
    ITERATION_KNOBS,
    WORK_SIZE_EXAMPLES,
    WORK_SIZE_KNOBS,
    Diagnosis,
    find_knob,
    halved,
    quoted_names,
    unknown,
)
from activities.sandbox.classify import last_exception
from workflows.contracts.execution import ExecutionOutcome
from workflows.contracts.reflection import DiagnoseInput, PatchChange

MAX_JOB_TIMEOUT_S = 7 * 24 * 3600.0
"""The largest ``resources.timeout_s`` a job spec accepts at all (``Resources`` bound)."""

NO_SMALLER_WORK = "change_the_code"
"""The fix named when the job has no work-size (or iteration) argument left to reduce: its
code must do less (the debuggers' part), or a person raises its limits; never a rule."""

_MODULE = re.compile(r"No module named '(?P<name>[^']+)'|module '(?P<alt>[^']+)' is not")

# Python errors a person can act on; none is patched (they need code or input changes).
_PYTHON_ERRORS: dict[str, tuple[str, str]] = {
    "FileNotFoundError": ("missing_input_file",
                          "declare the file as a task input or fix the path the code opens"),
    "KeyError": ("missing_key", "check the column or key name against the input data"),
    "IndexError": ("index_out_of_range", "check the input's shape against what the code expects"),
    "ValueError": ("invalid_value", "check the input data and the argument values it rejects"),
    "TypeError": ("type_error", "fix the argument types or the code"),
    "ZeroDivisionError": ("division_by_zero", "guard the division or check the input data"),
    "AssertionError": ("assertion_failed", "the job's own assertion failed; check its inputs"),
    "PermissionError": ("permission_denied",
                        "write only new files in the working directory; inputs are read-only"),
    "NameError": ("code_error", "fix the code"),
    "AttributeError": ("code_error", "fix the code"),
    "SyntaxError": ("code_error", "fix the code"),
    "ImportError": ("code_error", "fix the import"),
}

_Rule = Callable[[DiagnoseInput, ExecutionOutcome, list[str]], Diagnosis]


def diagnose_execution(req: DiagnoseInput) -> Diagnosis:
    """Diagnose a failed run from its classified outcome."""
    outcome = req.outcome
    if outcome is None:
        return unknown("the execution failed but its outcome was not recorded", [])
    evidence = [f"outcome {outcome.outcome}: {outcome.reason}"]
    rule = _RULES.get(outcome.outcome)
    if rule is None:
        return unknown(f"the job ended as {outcome.outcome} ({outcome.reason}); no rule covers "
                       "that, a person has to look", evidence)
    return rule(req, outcome, evidence)


def _out_of_memory(req: DiagnoseInput, outcome: ExecutionOutcome,
                   evidence: list[str]) -> Diagnosis:
    limit = req.job.resources.memory_mb
    evidence.append(f"peak memory {outcome.peak_memory_mb:g} MiB, limit {limit} MiB")
    knob = find_knob(req.job.args, WORK_SIZE_KNOBS)
    if knob is None:
        return Diagnosis(
            "out_of_memory", NO_SMALLER_WORK, evidence=evidence,
            reason=(f"ran out of memory at {limit} MiB and the job has no work-size argument "
                    f"({WORK_SIZE_EXAMPLES}) to shrink; add one and use it in the code, or have "
                    "a person raise resources.memory_mb (rules never raise memory)"))
    name, value = knob
    smaller = halved(value)
    if smaller is None:
        return Diagnosis(
            "out_of_memory", NO_SMALLER_WORK, evidence=evidence,
            reason=(f"ran out of memory at {limit} MiB with {name}={value!r}, which cannot be "
                    "reduced further; use less memory in the code or have a person raise "
                    "resources.memory_mb"))
    change = PatchChange(field=f"args.{name}", old_value=value, new_value=smaller,
                         reason=f"halve {name} to fit in {limit} MiB")
    return Diagnosis("out_of_memory", "reduce_batch_size", evidence=evidence, changes=[change],
                     reason=(f"ran out of memory at {limit} MiB; halving {name} from {value!r} "
                             f"to {smaller!r}"))


def _timeout(req: DiagnoseInput, outcome: ExecutionOutcome, evidence: list[str]) -> Diagnosis:
    current = req.job.resources.timeout_s
    ceiling = min(float(req.policy.max_timeout_s), MAX_JOB_TIMEOUT_S)
    evidence.append(f"ran {outcome.duration_s:g} s, limit {current:g} s, policy ceiling "
                    f"{ceiling:g} s")
    if current < ceiling:
        raised = min(current * 2, ceiling)
        change = PatchChange(field="resources.timeout_s", old_value=current, new_value=raised,
                             reason=f"double the time limit within the policy's {ceiling:g} s")
        return Diagnosis("timeout", "raise_timeout", evidence=evidence, changes=[change],
                         reason=(f"stopped at its time limit of {current:g} s; raising "
                                 f"resources.timeout_s to {raised:g} s"))
    knob = find_knob(req.job.args, ITERATION_KNOBS)
    smaller = None if knob is None else halved(knob[1])
    if knob is None or smaller is None:
        which = ("has no iteration argument (" + ITERATION_EXAMPLES + ") to cut"
                 if knob is None else f"cannot reduce {knob[0]}={knob[1]!r} further")
        return Diagnosis("timeout", NO_SMALLER_WORK, evidence=evidence,
                         reason=(f"stopped at {current:g} s, already the policy's ceiling, and "
                                 f"the job {which}; make the job faster"))
    name, value = knob
    change = PatchChange(field=f"args.{name}", old_value=value, new_value=smaller,
                         reason=f"halve {name}: the time limit is at the policy's ceiling")
    return Diagnosis("timeout", "reduce_iterations", evidence=evidence, changes=[change],
                     reason=(f"stopped at {current:g} s, already the policy's ceiling; halving "
                             f"{name} from {value!r} to {smaller!r}"))


def _missing_dependency(req: DiagnoseInput, outcome: ExecutionOutcome,
                        evidence: list[str]) -> Diagnosis:
    found = _MODULE.search(outcome.reason) or _MODULE.search(outcome.stderr_tail)
    module = (found["name"] or found["alt"]) if found else None
    if module is None:
        fix = ("add the missing module's package to the job's requirements, or name an "
               "environment that has it (environment: science)")
        return Diagnosis("missing_dependency", fix, evidence=evidence,
                         reason="a module the job imports is not installed; " + fix)
    package = module.split(".")[0]
    declared = any(r.lower().startswith(package.lower()) for r in req.job.requirements)
    evidence.append(f"module {module!r} " + ("is" if declared else "is not")
                    + " among the job's requirements")
    fix = (f"add {package} to the job's requirements, or name an environment that has it "
           "(environment: science)")
    return Diagnosis("missing_dependency", fix, evidence=evidence,
                     reason=f"module {module!r} is not installed for the job's Python; {fix}")


def _sandbox_violation(req: DiagnoseInput, outcome: ExecutionOutcome,
                       evidence: list[str]) -> Diagnosis:
    del req  # the job spec is not the problem, the code is
    return Diagnosis("unsafe_code", "change_code", evidence=evidence,
                     reason=(f"the sandbox stopped the job: {outcome.reason}; code is never "
                             "patched automatically, a person must change it"))


def _nonzero_exit(req: DiagnoseInput, outcome: ExecutionOutcome,
                  evidence: list[str]) -> Diagnosis:
    found = last_exception(outcome.stderr_tail)
    if found is None:
        last = _last_line(outcome.stderr_tail)
        if last:
            evidence.append(f"stderr ends: {last}")
        return unknown(f"the job ended with no Python traceback ({outcome.reason}); a person "
                       "has to look at its output", evidence)
    kind, message = found
    said = f"{kind}: {message}" if message else kind
    evidence.append(f"stderr: {said}")
    rule = _PYTHON_ERRORS.get(kind.rsplit(".", 1)[-1])
    if rule is None:
        return unknown(f"the job failed with {said}; no rule covers it", evidence)
    root_cause, fix = rule
    for name in quoted_names(message):
        args = [key for key, value in req.job.args.items() if value == name]
        evidence.append(f"{name!r} is " + (f"the value of argument {args[0]}" if args
                                           else "not among the job's argument values"))
    return Diagnosis(root_cause, fix, evidence=evidence,
                     reason=f"the job failed with {said}; {fix} (not patched automatically)")


def _last_line(text: str, limit: int = 300) -> str:
    """The last non-blank line of ``text``, cut to ``limit`` characters (saying so)."""
    line = next((x.strip() for x in reversed(text.splitlines()) if x.strip()), "")
    if len(line) <= limit:
        return line
    return f"{line[:limit]}... [{len(line) - limit} more characters]"


_RULES: dict[str, _Rule] = {
    "out_of_memory": _out_of_memory,
    "timeout": _timeout,
    "missing_dependency": _missing_dependency,
    "sandbox_violation": _sandbox_violation,
    "nonzero_exit": _nonzero_exit,
}
