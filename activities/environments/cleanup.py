"""Removing provisioned environments: one named by digest prefix or name, or the unused ones.

Each variant of an environment is a whole copy (uv installs with ``--link-mode copy``, so no
file of an environment is a hard link into uv's cache that a job could write through), so
variants add up. ``remove`` takes the environment's file lock — the one provisioning holds —
without waiting, so an installation under way is never broken, renames the directory aside
(a directory named by a digest is always whole) and deletes it. ``prune`` removes every
environment not provided for a job (``.last-used``; else created) for a number of days.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from activities.common.trees import remove_tree
from activities.environments.errors import EnvironmentProblem
from activities.environments.store import Environments
from workflows.contracts.environments import NAME_PATTERN

DIGEST_PREFIX = r"^[0-9a-f]{4,64}$"
"""A digest prefix ``assay envs remove`` accepts: at least 4 hex digits."""


@dataclass(frozen=True)
class Removed:
    """An environment that was removed, and how many bytes that freed."""

    name: str
    digest: str
    freed: int


def select(environments: Environments, what: str) -> dict[str, Any]:
    """The one provisioned environment whose digest starts with ``what`` or whose name it is.

    Raises:
        EnvironmentProblem: ``what`` is neither a digest prefix nor a name, matches nothing,
            or matches more than one environment (each is listed).
    """
    by_digest = re.match(DIGEST_PREFIX, what) is not None
    if not by_digest and re.match(NAME_PATTERN, what) is None:
        raise EnvironmentProblem("unknown", f"{what[:60]!r} is neither a digest prefix (4 to 64 "
                                 "hex digits) nor an environment name")
    records = environments.records()
    found = [r for r in records if str(r.get("digest", "")).startswith(what)
             or str(r.get("name", "")) == what]
    if not found:
        raise EnvironmentProblem("unknown", f"no provisioned environment has the digest prefix "
                                 f"or name {what!r}; `assay envs` lists them")
    if len(found) > 1:
        listed = ", ".join(f"{r.get('name')}@{str(r.get('digest'))[:12]}" for r in found[:20])
        raise EnvironmentProblem("unknown", f"{what!r} matches {len(found)} environments "
                                 f"({listed}); give a longer digest prefix")
    return found[0]


def remove(environments: Environments, record: dict[str, Any]) -> Removed:
    """Delete one provisioned environment (a record of ``environments.records()``).

    Raises:
        EnvironmentProblem: the environment is being provisioned right now.
    """
    digest = str(record["digest"])
    with open(environments.lock_path(digest), "w") as guard:
        try:
            fcntl.flock(guard, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as err:
            raise EnvironmentProblem("unknown", f"environment {digest[:12]} is being "
                                     "provisioned now; try again when it is done") from err
        try:
            path = environments.installed(digest)
            if path is None:
                return Removed(str(record.get("name", "")), digest, 0)
            aside = environments.root / f".removing-{digest}-{os.getpid()}"
            os.rename(path, aside)
            with contextlib.suppress(OSError):
                remove_tree(aside)
        finally:
            fcntl.flock(guard, fcntl.LOCK_UN)
    return Removed(str(record.get("name", "")), digest, int(record.get("size", 0)))


def prune(environments: Environments, older_than_days: float,
          now: datetime | None = None) -> list[Removed]:
    """Remove every environment not used for ``older_than_days`` (one being provisioned stays)."""
    cutoff = (now or datetime.now(UTC)) - timedelta(days=older_than_days)
    removed: list[Removed] = []
    for record in environments.records():
        if _last_used(record) >= cutoff:
            continue
        try:
            removed.append(remove(environments, record))
        except EnvironmentProblem:
            continue
    return removed


def _last_used(record: dict[str, Any]) -> datetime:
    for key in ("last_used", "created"):
        try:
            when = datetime.fromisoformat(str(record.get(key, "")))
        except ValueError:
            continue
        return when if when.tzinfo else when.replace(tzinfo=UTC)
    return datetime.max.replace(tzinfo=UTC)  # no date at all: never pruned
