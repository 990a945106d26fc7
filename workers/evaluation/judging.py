"""A run's answer judged against a benchmark's gold hypothesis, by the hypothesis judge role.

The judge is an agent role like the others (``Agents.judge_hypothesis``), asked here, on the
evaluating machine, through a model gateway of its own: live with a key (its traffic appended
to the evaluation's ``judge-recording.jsonl``, so a live evaluation can be judged again
offline), else from the task's ``judge_replay`` recording. A run with no answer fails with that
reason; a judge that cannot answer leaves the run failed with why, never an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from activities.agents.roles import Agents
from activities.llm.gateway import ModelGateway
from workers.evaluation.labels import FORMAT_CAUSE
from workers.evaluation.scoring import MISSING, lookup
from workers.evaluation.suite import SuiteTask
from workers.settings import Settings
from workflows.common.failures import root_message
from workflows.contracts.judging import JudgeRequest

JUDGE_CAUSE = "judge"
"""The prefix of a miss the judge could not decide (no key, no recording, an error)."""


@dataclass(frozen=True)
class Judged:
    """The judge's verdict on one run: held or missed, and the facets and reasons."""

    line: str
    passed: bool
    judgement: dict[str, Any] | None = None


def answer_text(document: Any) -> str:
    """The run's answer and analysis as one text ("" when the run gave none)."""
    answer = lookup(document, "answer")
    if answer is MISSING or not isinstance(answer, dict):
        return ""
    given = cast(dict[str, Any], answer)
    return "\n\n".join(str(given[k]) for k in ("answer", "analysis") if given.get(k)).strip()


async def judge_run(settings: Settings, task: SuiteTask, document: Any, *,
                    record: Path | None, replay: Path | None) -> Judged:
    """The judge's verdict on the run's answer against ``task.hypothesis``."""
    gold = task.hypothesis or ""
    answer = answer_text(document)
    if not answer:
        return Judged(f"{FORMAT_CAUSE}: the run gave no answer to judge", False)
    if replay is None and record is None:
        return Judged(f"{JUDGE_CAUSE}: not judged (no key, and the task has no judge_replay "
                      "recording)", False)
    gateway = ModelGateway(settings.anthropic_api_key, settings.anthropic_base_url,
                           {"default": settings.model_default, **settings.models},
                           light_model=settings.model_light, record_path=record,
                           replay_path=replay, timeout_s=settings.model_timeout_s)
    try:
        got = await Agents(gateway).judge_hypothesis(JudgeRequest(
            run_id="", question=task.goal or "", gold=gold, answer=answer[:20_000]))
    except Exception as err:  # a judge that cannot answer fails the sample, with why
        return Judged(f"{JUDGE_CAUSE}: not judged ({root_message(err) or type(err).__name__})",
                      False)
    finally:
        await gateway.aclose()
    verdict = got.judgement
    judgement = {**verdict.model_dump(mode="json"), "score": round(verdict.score, 4),
                 "matches": verdict.matches}
    line = (f"hypothesis: context {verdict.context:g}, variables {verdict.variables:g}, "
            f"relationship {verdict.relationship:g} (score {verdict.score:.2f}, want ≥ 0.5)")
    return Judged(line, verdict.matches, judgement)
