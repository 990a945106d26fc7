"""Workflow patch ids: each declared once, with the release it arrives in and what it guards.

A change to the commands a workflow emits is guarded with ``workflow.patched(ID)`` so that
runs begun on the code before it still replay. ``ID`` is a constant of this module, listed in
:data:`PATCHES` with the release it arrives in and the workflows it guards; a layout test
(``tests/workflows/test_patches.py``) refuses a ``workflow.patched`` or
``workflow.deprecate_patch`` whose id is not declared here, an id or a constant declared twice,
and an id declared again after it was retired. When a patch is deprecated and when it is
removed: ``docs/operations/patches.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

RELEASE = "0.1.0"
"""The current release. A patch declared from now on arrives in the next one."""


@dataclass(frozen=True)
class Patch:
    """One workflow patch id and its life.

    Attributes:
        id: the id ``workflow.patched`` records in a history's marker (never reused).
        since: the release the patch arrives in (``unreleased`` for those before 0.1.0).
        workflows: the workflow types whose commands it guards.
        what: the change it guards, in one sentence.
        deprecated: whether its call sites are ``workflow.deprecate_patch`` (runs from before
            it have all ended; the old path is gone).
        retired: the release that removed it, with its old path (empty while in force).
    """

    id: str
    since: str
    workflows: tuple[str, ...]
    what: str
    deprecated: bool = False
    retired: str = ""


_RUN, _TASK, _BRANCH = "ResearchWorkflow", "TaskWorkflow", "BranchWorkflow"
_STUDY, _LIBRARY = "StudyWorkflow", "SkillLibraryWorkflow"
_BATCH = "TaskBatchWorkflow"

_LINES = (_RUN, _BRANCH)
_ALL = (_RUN, _BRANCH, _TASK, _STUDY)

CHECKPOINTS_PATCH = "named-checkpoints"
STUDY_SYNTHESIS_PATCH = "study-synthesis"
TIERING_PATCH = "complexity-tiers"
TASK_BATCHES_PATCH = "task-batches"
OWN_VERDICTS_PATCH = "own-test-verdicts"
QUICK_TURNS_PATCH = "quick-turns"
BATCHED_MEMORY_PATCH = "batched-memory"
STUDY_PATCHES_FIRST_PATCH = "study-patches-first"

PATCHES: tuple[Patch, ...] = (
    Patch(CHECKPOINTS_PATCH, "0.2.0", (_RUN,), "a task's failure and a gate's approval name "
          "a checkpoint of the run, recorded as an event"),
    Patch(STUDY_SYNTHESIS_PATCH, since="0.2.0", workflows=(_STUDY,),
          what="an ended study asks the study synthesizer for its answer before its report"),
    Patch(TIERING_PATCH, since="0.2.0", workflows=(_TASK,),
          what="a light task asks one model reviewer, and calls the debuggers only after a "
               "second failure (its first escalates it to full)"),
    Patch(TASK_BATCHES_PATCH, since="0.2.0", workflows=(_RUN,),
          what="a run of over 1 000 tasks (or policy.batch_tasks) runs them in batches, "
               "each a TaskBatchWorkflow child"),
    Patch(OWN_VERDICTS_PATCH, since="0.2.0", workflows=(_STUDY,),
          what="an ended study concludes from its children only the hypotheses whose own "
               "test never ran; one its own test left inconclusive stays so"),
    Patch(QUICK_TURNS_PATCH, since="0.2.0", workflows=(_RUN, _BATCH),
          what="a large run and its batches pass the turn between two parts of their long "
               "work with a local activity that does nothing (pass_turn), not a 1 ms timer "
               "the server fires a second later"),
    Patch(BATCHED_MEMORY_PATCH, since="0.2.0", workflows=(_LIBRARY,),
          what="the library hands memory the outcomes it took in at once in one "
               "remember_tasks call per ten (per memory queue), not a remember_task each"),
    Patch(STUDY_PATCHES_FIRST_PATCH, since="0.2.0", workflows=(_STUDY,),
          what="a study settles its report's patches (own-test-verdicts, study-synthesis) "
               "as it starts, before any local activity: settled as it ends, right after one, "
               "a query during that local activity moved their markers to the next workflow "
               "task, where replay did not find them"),
)
"""The patches in force, oldest first (0.1.0 retired every earlier one)."""


def _retired(patch_id: str, workflows: tuple[str, ...], what: str) -> Patch:
    return Patch(patch_id, "unreleased", workflows, what, retired="0.1.0")


RETIRED: tuple[Patch, ...] = (
    _retired("job-environments", (_TASK,), "a job naming an environment or requirements "
             "runs in a prepared one (prepare_environment)"),
    _retired("reflection-memory", (_RUN, _TASK), "memory consulted at intake and told each "
             "finished task"),
    _retired("skill-library", (_RUN, _TASK), "the skill library matched at intake and told "
             "each outcome"),
    _retired("planner-memory", (_RUN,), "memory recalled for the planner before planning"),
    _retired("run-environment", (_TASK,), "a run's environment given to jobs naming none; the "
             "coder shown its packages"),
    _retired("gate-refusal-bounds", _ALL, "refusals at a gate bounded in number and size; "
             "an undecodable signal recorded"),
    _retired("library-outcome-bounds", (_LIBRARY,), "the library refuses an outcome over "
             "64 KB or with overlong ids"),
    _retired("task-result-detail", (_TASK,), "a task writes its whole result before returning "
             "it cut to fit"),
    _retired("reflector-role", (_TASK,), "the reflector role asked about a failure the rule "
             "table left unnamed"),
    _retired("retries-by-error-category", (_TASK,), "a failure retried as often as its "
             "category allows (5/3/2), not twice"),
    _retired("subagent-memory", (_TASK,), "a subagent's remembered fixes tried before the "
             "rule table"),
    _retired("learning-handed-off", (_TASK,), "a task hands its outcome to the learner by a "
             "local activity and goes on"),
    _retired("library-remembers", (_LIBRARY,), "the library hands an outcome's memory part "
             "to memory"),
    _retired("guideline-uses", (_LIBRARY,), "an outcome whose prompts had guideline skills "
             "is recorded"),
    _retired("utilisation-sees-jobs", (_LIBRARY,), "uses recorded with the jobs the tasks ran, "
             "ten at a time"),
    _retired("library-writer", (_LIBRARY,), "the skill writer asked after extraction and "
             "maintenance"),
    _retired("skills-reformulated", (_RUN,), "a goal that matched no skill reformulated by "
             "the writer and matched again"),
    _retired("supply-plan-waits", (_RUN,), "a plan supplied while the run still starts waits "
             "until the run awaits one"),
    _retired("plan-answer", (_RUN,), "a plan run with a model ends with the output processor's "
             "answer"),
    _retired("result-gate-holds-open", (_RUN,), "a run with a human result gate is held open "
             "for branches"),
    _retired("selection-ties", (_RUN,), "lines tied within their intervals kept by the group's "
             "tie rule"),
    _retired("defer-words-by-context", (_TASK,), "a deferred patch says 'next cycle' only in "
             "a study's cycle"),
    _retired("estimates-in-regression", (_TASK,), "a retry's metrics written as estimates "
             "judged for regression"),
    _retired("coalesced-search-attributes", _ALL, "search attributes set in one activation "
             "sent as one upsert"),
    _retired("event-flushes-at-waits", (_RUN, _BRANCH, _TASK), "events written before a "
             "wait for something slow, not before every step"),
    _retired("decisions-on-record", _ALL, "a decision's channel kept, refusals written at "
             "once, gate timers summarised"),
    _retired("branches-cannot-hang", _LINES, "task and branch coroutines end with a reason; "
             "a cancel withdraws a waiting gate"),
    _retired("cancels-not-awaited", _LINES, "a cancel asks each running task to stop without "
             "awaiting the server's answer"),
)
"""The patches removed with their old paths, by release: their ids are never declared again
(a history still carrying one would take the new meaning for the old)."""

