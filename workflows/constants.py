"""Task-queue names, workflow-ID formats and search-attribute keys, in one place.

Workers, workflows, the client and tests import these names instead of repeating literals.
"""

from __future__ import annotations

import hashlib
import re
from enum import StrEnum

from temporalio.common import SearchAttributeKey


class Pool(StrEnum):
    """The worker pools; each one is a Temporal task queue of the same name."""

    ORCHESTRATION = "assay-orchestration"
    AGENTS = "assay-agents"
    SANDBOX = "assay-sandbox"
    REFLECTION = "assay-reflection"
    SKILLS = "assay-skills"


STATUS_KEY = SearchAttributeKey.for_keyword("AssayStatus")
PHASE_KEY = SearchAttributeKey.for_keyword("AssayPhase")
KIND_KEY = SearchAttributeKey.for_keyword("AssayKind")
PLAN_KEY = SearchAttributeKey.for_keyword("AssayPlan")
ATTEMPTS_KEY = SearchAttributeKey.for_keyword_list("AssayAttempts")
"""Attempts per phase, e.g. ``["execute:2", "review:1"]``: ``AssayAttempts = "execute:2"``."""

SEARCH_ATTRIBUTES: dict[str, str] = {
    STATUS_KEY.name: "Keyword",
    PHASE_KEY.name: "Keyword",
    KIND_KEY.name: "Keyword",
    PLAN_KEY.name: "Keyword",
    ATTEMPTS_KEY.name: "KeywordList",
}
"""Every search attribute Assay sets, with its Temporal type (registered by `assay up`)."""

RUN_ID_PREFIX = "assay-run"
_SLUG_UNSAFE = re.compile(r"[^a-z0-9]+")


def slugify(text: str, *, limit: int = 40) -> str:
    """Lower-case, hyphen-separated form of ``text`` for use inside workflow IDs."""
    slug = _SLUG_UNSAFE.sub("-", text.lower()).strip("-")
    return slug[:limit].rstrip("-") or "plan"


def run_workflow_id(plan_name: str, plan_digest: str, attempt: int = 1) -> str:
    """Readable ResearchWorkflow ID derived from the plan's name and content digest.

    The same plan always maps to the same ID, so starting it twice is refused by Temporal
    instead of silently running twice; ``attempt`` > 1 names a deliberate re-run.
    """
    base = f"{RUN_ID_PREFIX}-{slugify(plan_name)}-{plan_digest[:10]}"
    return base if attempt == 1 else f"{base}-r{attempt}"


def task_workflow_id(run_id: str, task_id: str) -> str:
    """ID of the TaskWorkflow of ``task_id`` inside run ``run_id``.

    Task ids are already restricted to ``[A-Za-z0-9_.-]`` by the plan schema, so they are used
    as they are: distinct ids always give distinct workflow IDs.
    """
    return f"{run_id}.task-{task_id}"


def digest(data: bytes) -> str:
    """Hex sha256 of ``data``; the plan's identity and every artifact's checksum."""
    return hashlib.sha256(data).hexdigest()
