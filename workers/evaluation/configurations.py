"""The configurations a suite runs under: everything on, and one per part switched off.

Each ablation maps onto a switch the run's policy already has, so an ablated run is an
ordinary run: ``skills`` → ``RunPolicy.skills.enabled`` (no retrieval, no outcome sent to the
library), ``memory`` → ``RunPolicy.memory.enabled`` (no rules or templates at intake, no
episodes kept, no planner notes), ``debuggers`` → ``RunPolicy.agents.debuggers`` and
``model-review`` → ``RunPolicy.agents.model_review``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from workers.intake.runpolicy import AgentFlags, build_policy, model_available
from workers.settings import Settings
from workflows.contracts.policy import RunPolicy

ABLATIONS: dict[str, str] = {
    "skills": "the skill library (retrieval, and learning from outcomes)",
    "memory": "reflection memory (rules, templates, episodes, planner notes)",
    "debuggers": "the three model debuggers after a failed job",
    "model-review": "model reviewers beside the deterministic ones",
}
FULL = "full"


class AblationError(ValueError):
    """An ablation Assay does not know; the message lists the known ones."""


@dataclass(frozen=True)
class Configuration:
    """A named configuration: ``full``, or ``no-<part>`` with parts switched off."""

    name: str
    off: tuple[str, ...] = ()

    def policy(self, settings: Settings, *, replay: Path | None = None,
               record: Path | None = None) -> RunPolicy:
        """The run policy of this configuration (``replay``/``record``: model traffic)."""
        def on(part: str) -> bool | None:
            return False if part in self.off else None

        flags = AgentFlags(replay=replay, record=record, debuggers=on("debuggers"),
                           model_review=on("model-review"))
        return build_policy(settings, agents=flags, memory=on("memory"), skills=on("skills"))


def parse_ablations(text: str | None, *, option: str = "--ablate") -> list[str]:
    """``"skills,memory"`` → ``["skills", "memory"]``; ``"all"`` → every ablation.

    Raises:
        AblationError: a name that is not an ablation.
    """
    if not text:
        return []
    names = [n.strip() for n in text.split(",") if n.strip()]
    if names == ["all"]:
        return list(ABLATIONS)
    unknown = [n for n in names if n not in ABLATIONS]
    if unknown:
        raise AblationError(f"{option}: unknown {', '.join(map(repr, unknown))}; known: "
                            f"{', '.join(ABLATIONS)} (or all)")
    return list(dict.fromkeys(names))


def configurations(ablations: list[str], always_off: list[str] | None = None,
                   ) -> list[Configuration]:
    """The base configuration first, then one per ablation.

    The base is ``full``, or, with ``always_off`` (parts off in every configuration, e.g.
    skills, so that a skill answering a goal does not hide what the model-backed parts do),
    ``no-skills``; an ablation adds its part: ``no-skills+no-memory``.
    """
    kept = [n for n in always_off or [] if n not in ablations]
    prefix = "+".join(f"no-{n}" for n in kept)
    base = Configuration(prefix or FULL, tuple(kept))
    return [base, *(Configuration("+".join(filter(None, (prefix, f"no-{n}"))), (*kept, n))
                    for n in ablations)]


def model_mode(settings: Settings) -> str:
    """How goal tasks reach a model: ``live`` with a key, else ``replay`` of recordings."""
    return "live" if model_available(settings) and settings.model_replay_path is None \
        else "replay"
