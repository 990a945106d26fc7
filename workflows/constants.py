"""Task-queue names, workflow-ID formats and search-attribute keys, in one place.

Workers, workflows, the client and tests import these names instead of repeating literals.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes

from workflows.contracts.words import slug

STATUS_KEY = SearchAttributeKey.for_keyword("AssayStatus")
PHASE_KEY = SearchAttributeKey.for_keyword("AssayPhase")
KIND_KEY = SearchAttributeKey.for_keyword("AssayKind")
PLAN_KEY = SearchAttributeKey.for_keyword("AssayPlan")
ATTEMPTS_KEY = SearchAttributeKey.for_keyword_list("AssayAttempts")
"""Attempts per phase, e.g. ``["execute:2", "review:1"]``: ``AssayAttempts = "execute:2"``."""
PARENT_KEY = SearchAttributeKey.for_keyword("AssayParent")
"""The run a branch (or a run started to branch from a closed one) belongs to:
``temporal workflow list --query 'AssayParent="RUN"'``."""

SEARCH_ATTRIBUTES: dict[str, str] = {
    STATUS_KEY.name: "Keyword",
    PHASE_KEY.name: "Keyword",
    KIND_KEY.name: "Keyword",
    PLAN_KEY.name: "Keyword",
    ATTEMPTS_KEY.name: "KeywordList",
    PARENT_KEY.name: "Keyword",
}
"""Every search attribute Assay sets, with its Temporal type (registered by `assay up`)."""


def started_with(kind: str, *pairs: SearchAttributePair[Any]) -> TypedSearchAttributes:
    """The search attributes a workflow starts with: ``pairs``, its kind, ``running``.

    A run started by the client, a task or cycle run started by its parent: the workflow would
    otherwise upsert its kind and status first thing; finding them set at its start, it sends
    nothing for them (``workflows.common.events``).
    """
    return TypedSearchAttributes([*pairs, SearchAttributePair(KIND_KEY, kind),
                                  SearchAttributePair(STATUS_KEY, "running")])


RUN_ID_PREFIX = "assay-run"
STUDY_ID_PREFIX = "assay-study"
RUN_ID_NAME_CHARS = 40
"""The most characters of the plan's name a run ID carries."""


def run_workflow_id(plan_name: str, plan_digest: str, attempt: int = 1) -> str:
    """Readable ResearchWorkflow ID derived from the plan's name and content digest.

    The same plan always maps to the same ID, so starting it twice is refused by Temporal
    instead of silently running twice; ``attempt`` > 1 names a deliberate re-run.
    """
    name = slug(plan_name, limit=RUN_ID_NAME_CHARS, empty="plan", whole_words=False)
    base = f"{RUN_ID_PREFIX}-{name}-{plan_digest[:10]}"
    return base if attempt == 1 else f"{base}-r{attempt}"


def study_workflow_id(name: str, start_digest: str, attempt: int = 1) -> str:
    """Readable StudyWorkflow ID from the study's name (its goal or first plan) and digest.

    The same start always maps to the same ID; ``attempt`` > 1 names a deliberate re-run.
    """
    name = slug(name, limit=RUN_ID_NAME_CHARS, empty="study", whole_words=False)
    base = f"{STUDY_ID_PREFIX}-{name}-{start_digest[:10]}"
    return base if attempt == 1 else f"{base}-r{attempt}"


def cycle_run_id(study_id: str, cycle: int) -> str:
    """ID of the ResearchWorkflow that runs cycle ``cycle`` of study ``study_id``."""
    return f"{study_id}.cycle-{cycle}"


def in_study(run_id: str) -> bool:
    """Whether run ``run_id`` is a study's cycle (or a branch of one).

    Only a study has a next planning cycle to defer to.
    """
    return re.search(r"\.cycle-\d+(\.|$)", run_id) is not None


def task_workflow_id(run_id: str, task_id: str) -> str:
    """ID of the TaskWorkflow of ``task_id`` inside run ``run_id``.

    Task ids are already restricted to ``[A-Za-z0-9_.-]`` by the plan schema, so they are used
    as they are: distinct ids always give distinct workflow IDs.
    """
    return f"{run_id}.task-{task_id}"


def branch_workflow_id(run_id: str, branch: str) -> str:
    """ID of the BranchWorkflow ``branch`` of run ``run_id`` (names are unique in a run)."""
    return f"{run_id}.branch-{branch}"


def batch_workflow_id(run_id: str, number: int) -> str:
    """ID of the TaskBatchWorkflow of batch ``number`` (from 1) of run ``run_id``."""
    return f"{run_id}.batch-{number:04d}"


def branch_task_workflow_id(run_id: str, branch: str, task_id: str) -> str:
    """ID of the TaskWorkflow of ``task_id`` inside branch ``branch`` of run ``run_id``."""
    return f"{branch_workflow_id(run_id, branch)}.task-{task_id}"


def digest(data: bytes) -> str:
    """Hex sha256 of ``data``; the plan's identity and every artifact's checksum."""
    return hashlib.sha256(data).hexdigest()
