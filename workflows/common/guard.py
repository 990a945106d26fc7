"""Guardrails every patch must pass before it is offered: a patch may narrow, never widen.

A patched job must differ from the original (never an identical retry), run the same code
with the same packages, ask for no more memory and nothing beyond the policy's ceilings, keep
the evidence bar where it was (expected artifacts fixed, expected metrics only added), and keep
its arguments plain values: no new paths, URLs or hosts, no credentials.

A branch or a person's ``modify`` at a gate (:func:`check_change`) is held to the same rules
but two: it may ask for more resources within the policy's ceilings, and a branch may bring a
person's code, which the whole review panel then checks like any job. Pure code: reflection
and memory (activities) and the workflows use the one guard.
"""

from __future__ import annotations

import re

from workflows.contracts.plan import JobSpec, Scalar
from workflows.contracts.policy import ReviewPolicy

CODE_FIELDS = ("entry", "code", "source", "filename", "requirements")
_CREDENTIAL = re.compile(r"(^|_)(api_?key|access_?key|secret(_?key)?|token|password|passwd|pwd"
                         r"|credentials?|auth|private_?key|session_?key|cookie)($|_)")
_HOST_NAME = re.compile(r"(^|_)(host(name)?|url|uri|endpoint|server|proxy|domain|port|addr"
                        r"|address|dsn|bucket)($|_)")
_HOST_VALUE = re.compile(r"://|^\d{1,3}(\.\d{1,3}){3}(:\d+)?$|^[\w.-]+@[\w.-]+$|^localhost\b")


def check_patch(old: JobSpec, new: JobSpec, policy: ReviewPolicy) -> list[str]:
    """Every guardrail ``new`` breaks as a patch of ``old`` (empty: the patch is allowed)."""
    violations: list[str] = []
    if old == new:
        violations.append("the patch changes nothing: an identical retry would fail the same way")
    violations.extend(f"the patch changes {name}: code and packages are never patched"
                      for name in CODE_FIELDS if getattr(old, name) != getattr(new, name))
    violations.extend(_resources(old, new, policy, more_memory=False))
    violations.extend(_evidence_bar(old, new))
    violations.extend(_args(old.args, new.args))
    return violations


def check_change(old: JobSpec, new: JobSpec, policy: ReviewPolicy, *,
                 code: bool = False) -> list[str]:
    """Every guardrail ``new`` breaks as a branch's or a person's change of ``old``.

    Resources may grow up to the policy's ceilings; with ``code`` the job's code may be a
    person's (reviewed by the panel), never its packages or environment.
    """
    fields = ("requirements",) if code else CODE_FIELDS
    violations = [f"the change touches {name}: a branch changes arguments and resources"
                  + (" and code" if code else "") + ", never packages"
                  for name in fields if getattr(old, name) != getattr(new, name)]
    if old.environment != new.environment:
        violations.append("the change touches environment: a branch runs where its line ran")
    violations.extend(_resources(old, new, policy, more_memory=True))
    violations.extend(_evidence_bar(old, new))
    violations.extend(_args(old.args, new.args))
    return violations


def _resources(old: JobSpec, new: JobSpec, policy: ReviewPolicy, *,
               more_memory: bool) -> list[str]:
    found: list[str] = []
    a, b = old.resources, new.resources
    if b.memory_mb > a.memory_mb and not more_memory:
        found.append(f"the patch raises resources.memory_mb from {a.memory_mb} to {b.memory_mb} "
                     "MiB: rules never ask for more memory")
    ceilings = (("memory_mb", a.memory_mb, b.memory_mb, policy.max_memory_mb),
                ("timeout_s", a.timeout_s, b.timeout_s, policy.max_timeout_s),
                ("cpus", a.cpus, b.cpus, policy.max_cpus))
    found.extend(f"the patch raises resources.{name} to {after:g}, beyond the policy's ceiling "
                 f"of {ceiling:g}" for name, before, after, ceiling in ceilings
                 if after > before and after > ceiling)
    return found


def _evidence_bar(old: JobSpec, new: JobSpec) -> list[str]:
    found: list[str] = []
    if old.expected_artifacts != new.expected_artifacts:
        found.append("the patch changes expected_artifacts: the evidence a result needs is "
                     "fixed by the plan")
    dropped = [m for m in old.expected_metrics if m not in new.expected_metrics]
    if dropped:
        found.append(f"the patch drops expected metrics {', '.join(dropped)}: a patch may "
                     "declare metrics, never lower the evidence bar")
    return found


def _args(old: dict[str, Scalar], new: dict[str, Scalar]) -> list[str]:
    found = [f"the patch removes argument {name!r}" for name in old if name not in new]
    for name, value in new.items():
        if name in old and old[name] == value and type(old[name]) is type(value):
            continue
        found.extend(_arg(name, value, old.get(name), added=name not in old))
    return found


def _arg(name: str, value: Scalar, before: Scalar | None, *, added: bool) -> list[str]:
    found: list[str] = []
    key = name.lower().replace("-", "_")
    # Values are plain scalars by JobSpec's own validation; a patch must also keep the type.
    if not added and type(value) is not type(before):
        found.append(f"argument {name!r} changes type from {type(before).__name__} to "
                     f"{type(value).__name__}")
    if _CREDENTIAL.search(key):
        found.append(f"argument {name!r} looks like a credential: patches never touch those")
    if added and _HOST_NAME.search(key):
        found.append(f"new argument {name!r} looks like a host or URL setting")
    if isinstance(value, str) and _path_or_host(value):
        found.append(f"argument {name!r} = {value!r} looks like a path, URL or host: patches "
                     "may not point a job somewhere new")
    return found


def _path_or_host(value: str) -> bool:
    text = value.strip()
    return ("/" in text or "\\" in text or ".." in text or text.startswith("~")
            or bool(_HOST_VALUE.search(text)))
