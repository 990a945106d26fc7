"""Building a run's policy from settings, an optional policy file and command-line flags.

The agents part says whether the run may ask a model, with what budget, and which recording
it records to or replays from. It never holds a key: whether a model is available is decided
here from settings, and the key itself stays with the agents workers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from workers.intake.jsonfile import JsonFileError, read_json
from workers.intake.recordings import PolicyError, recording_for_run
from workers.settings import Settings
from workflows.common.validation import field_errors
from workflows.contracts.environments import BASE, NAME_PATTERN
from workflows.contracts.policy import (
    AgentsPolicy,
    GateKind,
    GateRule,
    Queues,
    ReviewPolicy,
    RunPolicy,
    TimeoutAction,
)
from workflows.contracts.pools import Pool

NoModelAction = Literal["wait", "defer"]
MAX_POLICY_BYTES = 1_000_000
"""A policy is a few hundred bytes; a file over this is refused before it is read."""


def queues_from(settings: Settings) -> Queues:
    """The task queues a run's activities go to."""
    return Queues(**{p.name.lower(): settings.queue(p) for p in Pool})


@dataclass(frozen=True)
class AgentFlags:
    """Agent options from the command line; None keeps the settings' or policy file's value."""

    enabled: bool | None = None
    record: Path | None = None
    replay: Path | None = None
    budget_tokens: int | None = None
    budget_usd: float | None = None
    no_model: NoModelAction | None = None
    model_review: bool | None = None
    debuggers: bool | None = None
    plan_review_rounds: int | None = None


def model_available(settings: Settings) -> bool:
    """Whether settings give a model: an API key, or a recording to replay from."""
    key = settings.anthropic_api_key
    has_key = key is not None and bool(key.get_secret_value().strip())
    return has_key or settings.model_replay_path is not None


def build_policy(settings: Settings, *, policy_file: Path | None = None,
                 max_parallel: int | None = None, human_gates: list[GateKind] | None = None,
                 approvers: list[str] | None = None, gate_timeout_s: float | None = None,
                 on_timeout: TimeoutAction | None = None,
                 agents: AgentFlags | None = None, memory: bool | None = None,
                 skills: bool | None = None, environment: str | None = None,
                 known_environments: Collection[str] | None = None) -> RunPolicy:
    """Settings first, then the policy file, then flags (each overrides the one before).

    ``environment`` (``--environment``) is the run's job environment; with
    ``known_environments`` (the named sets this machine knows) an unknown one is refused.
    """
    base: dict[str, Any] = {
        "max_parallel": settings.max_parallel_tasks,
        "review": ReviewPolicy(max_timeout_s=settings.job_max_timeout_s,
                               max_memory_mb=settings.job_max_memory_mb).model_dump(),
        "agents": {"enabled": model_available(settings)},
        "memory": {"enabled": settings.memory_enabled},
        "skills": {"enabled": settings.skills_enabled},
        "tiering": settings.tiering,
    }
    if policy_file is not None:
        base = _merge(base, _read(policy_file))
    try:
        policy = RunPolicy.model_validate(base)
    except ValidationError as err:
        where = f"{policy_file}" if policy_file else "policy"
        lines = map(str, field_errors(err, whole=""))
        raise PolicyError(f"{where}: invalid policy:\n  " + "\n  ".join(lines)) from err
    if max_parallel is not None:
        policy.max_parallel = max_parallel
    for kind in human_gates or []:
        rule: GateRule = getattr(policy.gates, kind)
        rule.human = True
        if approvers:
            rule.approvers = list(approvers)
        if gate_timeout_s is not None:
            rule.timeout_s = gate_timeout_s
        if on_timeout is not None:
            rule.on_timeout = on_timeout
    policy.agents = _agents(policy.agents, agents or AgentFlags())
    policy.agents.recording = recording_for_run(settings, policy.agents.recording)
    if memory is not None:
        policy.memory.enabled = memory
    if skills is not None:
        policy.skills.enabled = skills
    if environment is not None:
        policy.environment = check_environment(environment, known_environments)
    elif policy.environment is not None and known_environments is not None:
        check_environment(policy.environment, known_environments)
    return policy


def check_environment(name: str, known: Collection[str] | None = None) -> str:
    """``name`` if it is a valid environment name, and one of ``known`` (or ``base``) when given.

    Raises:
        PolicyError: saying why not, and which names are known.
    """
    shown = f"{name[:40]!r}" + ("…" if len(name) > 40 else "")
    known_text = ", ".join(sorted(known)) if known else "none"
    if not re.fullmatch(NAME_PATTERN, name):
        raise PolicyError(f"--environment {shown}: not an environment name (1-40 lower-case "
                          "letters, digits, - and _, starting with a letter); known: "
                          f"{known_text}")
    if known is not None and name not in known and name != BASE:
        raise PolicyError(f"--environment {shown}: there is no environment named so; known: "
                          f"{known_text} (an operator adds one as <name>.txt in "
                          "ASSAY_ENVIRONMENTS_DIR)")
    return name


def _agents(current: AgentsPolicy, flags: AgentFlags) -> AgentsPolicy:
    """The agents policy with the flags applied, its budget and recording checked."""
    if flags.record is not None and flags.replay is not None:
        raise PolicyError("--record and --replay exclude each other: record a run's model "
                          "exchanges, or replay them from an earlier recording, not both")
    values = current.model_dump()
    if flags.replay is not None:
        values["recording"] = {"mode": "replay", "path": str(flags.replay)}
        values["enabled"] = True
    elif flags.record is not None:
        values["recording"] = {"mode": "record", "path": str(flags.record)}
    given = {"enabled": flags.enabled, "budget_tokens": flags.budget_tokens,
             "budget_usd": flags.budget_usd, "no_model": flags.no_model,
             "model_review": flags.model_review, "debuggers": flags.debuggers,
             "plan_review_rounds": flags.plan_review_rounds}
    values.update({key: value for key, value in given.items() if value is not None})
    try:
        agents = AgentsPolicy.model_validate(values)
    except ValidationError as err:
        lines = (f"agents.{e}" for e in field_errors(err, whole=""))
        raise PolicyError("invalid agents policy:\n  " + "\n  ".join(lines)) from err
    if agents.budget_usd is not None and not math.isfinite(agents.budget_usd):
        raise PolicyError(f"agents.budget_usd: {agents.budget_usd} is not a number of dollars; "
                          "give a finite amount such as 2.50")
    return agents


def _read(path: Path) -> dict[str, Any]:
    try:
        raw: Any = read_json(path, what="policy", max_bytes=MAX_POLICY_BYTES)
    except JsonFileError as err:
        raise PolicyError(str(err)) from None
    if not isinstance(raw, dict):
        raise PolicyError(f"{path}: a policy is a JSON object")
    return dict(raw)  # pyright: ignore[reportUnknownArgumentType]


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)  # pyright: ignore[reportUnknownArgumentType]
        else:
            merged[key] = value
    return merged
