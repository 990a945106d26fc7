"""The worker pools, by the Temporal task queue each one serves.

Contracts name them as the default queues of a run (:class:`~workflows.contracts.policy.Queues`)
and of the skill library; workers, the client and the stack start and address them by these
names.
"""

from __future__ import annotations

from enum import StrEnum


class Pool(StrEnum):
    """The worker pools; each one is a Temporal task queue of the same name."""

    ORCHESTRATION = "assay-orchestration"
    AGENTS = "assay-agents"
    SANDBOX = "assay-sandbox"
    REFLECTION = "assay-reflection"
    SKILLS = "assay-skills"
