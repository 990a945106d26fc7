"""The hypothesis judge's contracts: a run's answer held against a gold hypothesis.

DiscoveryBench scores a discovered hypothesis against its gold one on three facets: the
context it holds in (the population, the conditions), the variables it relates, and the
relationship it states between them. The judge answers each as a score from 0 to 1 with its
reasons; the hypothesis matches when their product reaches :data:`MATCH_AT`.
"""

from __future__ import annotations

from pydantic import Field

from workflows.contracts.base import Model
from workflows.contracts.roles import AgentRequest, RoleAnswer

MATCH_AT = 0.5


class JudgeOutput(Model):
    """The judge's answer: each facet scored, and why."""

    context: float = Field(ge=0, le=1)
    """1 when the answer's hypothesis holds in the gold one's context, 0 when not."""
    variables: float = Field(ge=0, le=1)
    """The share of the gold hypothesis's variables the answer relates (and no others)."""
    relationship: float = Field(ge=0, le=1)
    """1 for the same relationship, 0.5 for its direction or form only, 0 for another."""
    reasons: str = Field(min_length=1, max_length=4000)

    @property
    def score(self) -> float:
        """The product of the three facets, as DiscoveryBench combines them."""
        return self.context * self.variables * self.relationship

    @property
    def matches(self) -> bool:
        """Whether the score reaches :data:`MATCH_AT`."""
        return self.score >= MATCH_AT


class JudgeRequest(AgentRequest):
    """Input of ``judge_hypothesis``: the question, the gold hypothesis, the run's answer."""

    question: str = Field(min_length=1, max_length=8000)
    gold: str = Field(min_length=1, max_length=4000)
    answer: str = Field(min_length=1, max_length=20_000)


class JudgeAnswer(RoleAnswer):
    """Result of ``judge_hypothesis``."""

    judgement: JudgeOutput
