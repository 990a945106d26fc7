"""Building a run's policy from settings, an optional policy file and command-line flags."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from workers.settings import Settings
from workflows.constants import Pool
from workflows.policy import GateKind, GateRule, Queues, ReviewPolicy, RunPolicy, TimeoutAction


class PolicyError(ValueError):
    """A policy file or flag is wrong; the message says what and where."""


def queues_from(settings: Settings) -> Queues:
    """The task queues a run's activities go to."""
    return Queues(**{p.name.lower(): settings.queue(p) for p in Pool})


def build_policy(settings: Settings, *, policy_file: Path | None = None,
                 max_parallel: int | None = None, human_gates: list[GateKind] | None = None,
                 approvers: list[str] | None = None, gate_timeout_s: float | None = None,
                 on_timeout: TimeoutAction | None = None) -> RunPolicy:
    """Settings first, then the policy file, then flags (each overrides the one before)."""
    base: dict[str, Any] = {
        "max_parallel": settings.max_parallel_tasks,
        "review": ReviewPolicy(max_timeout_s=settings.job_max_timeout_s,
                               max_memory_mb=settings.job_max_memory_mb).model_dump(),
    }
    if policy_file is not None:
        base = _merge(base, _read(policy_file))
    try:
        policy = RunPolicy.model_validate(base)
    except ValidationError as err:
        where = f"{policy_file}" if policy_file else "policy"
        lines = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors()]
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
    return policy


def _read(path: Path) -> dict[str, Any]:
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as err:
        raise PolicyError(f"{path}: no such policy file") from err
    except OSError as err:
        raise PolicyError(f"{path}: cannot read the policy ({err.strerror})") from err
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise PolicyError(f"{path}: not valid JSON ({err})") from err
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
