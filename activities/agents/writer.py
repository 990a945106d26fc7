"""The skill writer role: three activities on the agents pool, one model role each.

``write_skill`` writes a pattern's contrastive explanation, description and applicability and
classifies it as a skill or a subagent; ``judge_merge`` decides a merge the structural judge
left undecided; ``reformulate_query`` rewrites a query that matched nothing. Each goes
through the same consultation as every role (budget, recording or replay, repair of an answer
that fails its schema or :mod:`activities.agents.writing`'s checks, accounting), so a refused
or invalid answer fails the activity as ``InvalidModelOutput`` and its caller keeps the
deterministic result.
"""

from __future__ import annotations

from activities.agents import writing
from activities.agents.roles import Agents
from activities.llm.gateway import ModelGateway
from workflows.catalogue import JUDGE_MERGE, REFORMULATE_QUERY, WRITE_SKILL
from workflows.contracts.writing import (
    JudgeMergeAnswer,
    JudgeMergeRequest,
    MergeJudgementOutput,
    ReformulateAnswer,
    ReformulateRequest,
    ReformulationOutput,
    SkillWritingOutput,
    WriteSkillAnswer,
    WriteSkillRequest,
)


class SkillWriter:
    """The skill writer's activities, consulting the model as every role does.

    Args:
        gateway: the agents worker's model gateway (shared with the other roles).
    """

    def __init__(self, gateway: ModelGateway) -> None:
        self.gateway = gateway
        self._agents = Agents(gateway)
        self._consult = self._agents._consult  # pyright: ignore[reportPrivateUsage]

    @WRITE_SKILL.defn
    async def write_skill(self, req: WriteSkillRequest) -> WriteSkillAnswer:
        """A pattern's explanation, description, applicability and kind."""
        got = await self._consult(req, "skill_writer", SkillWritingOutput,
                                  writing.writing_message(req.pattern), writing.writing)
        return WriteSkillAnswer(skill_id=req.pattern.skill_id, writing=got.value,
                                spend=got.spend)

    @JUDGE_MERGE.defn
    async def judge_merge(self, req: JudgeMergeRequest) -> JudgeMergeAnswer:
        """Whether two same-shape patterns just below the merge similarity are one."""
        got = await self._consult(req, "merge_judge", MergeJudgementOutput,
                                  writing.merge_message(req.pair), writing.judgement)
        return JudgeMergeAnswer(first=req.pair.first.skill_id, second=req.pair.second.skill_id,
                                judgement=got.value, spend=got.spend)

    @REFORMULATE_QUERY.defn
    async def reformulate_query(self, req: ReformulateRequest) -> ReformulateAnswer:
        """One retrieval query in other words, for a goal or action that matched nothing."""
        got = await self._consult(req, "query_reformulator", ReformulationOutput,
                                  writing.reformulate_message(req),
                                  lambda out: writing.reformulation(out, req.text))
        return ReformulateAnswer(query=got.value, spend=got.spend)
