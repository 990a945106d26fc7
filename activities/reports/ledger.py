"""The run ledger: an append-only, hash-chained record of plans, approvals and patches.

Each line is a JSON entry carrying the sha256 of the line before it (a hash chain, see
:mod:`activities.common.chain`), so any edit, deletion or reordering breaks the chain and
:func:`verify_ledger` says where. Entries have stable ids, so writing the same run again (a
retried activity, a later cycle) appends only what is new.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from activities.common.chain import GENESIS, ChainWalk, chain, sha256_hex
from workflows.contracts.results import RunReport


class LedgerError(ValueError):
    """The ledger's chain is broken; the message names the line."""


def ledger_entries(result: RunReport) -> list[dict[str, Any]]:
    """Every supplied plan, approval and patch of a run, in stable order, no chain fields."""
    entries: list[dict[str, Any]] = []
    if result.supplied_plan is not None:
        entries.append({"kind": "plan", "run_id": result.run_id, "task_id": None,
                        **result.supplied_plan.model_dump(mode="json")})
    for gate in result.gates:
        entries.append({"kind": "approval", "run_id": result.run_id, "task_id": None,
                        **gate.model_dump(mode="json")})
    for task in result.tasks:
        prov = task.provenance
        if task.verdicts:
            entries.append({"kind": "review", "run_id": result.run_id, "task_id": task.task_id,
                            "attempts": prov.approval.attempts,
                            "verdicts": {v.reviewer: v.verdict for v in task.verdicts},
                            "decided_by": prov.approval.decided_by})
        for gate in prov.approvals:
            entries.append({"kind": "approval", "run_id": result.run_id,
                            "task_id": task.task_id, **gate.model_dump(mode="json")})
        for patch in prov.patches:
            entries.append({"kind": "patch", "run_id": result.run_id, "task_id": task.task_id,
                            **patch.model_dump(mode="json")})
    for entry in entries:
        entry["entry_id"] = _digest(entry)
    return entries


def append_ledger(path: Path, entries: list[dict[str, Any]]) -> int:
    """Append the entries not yet in the ledger, chained to its last line; returns how many."""
    if path.exists():
        verify_ledger(path)  # never extend a chain that is already broken
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    known = {json.loads(line)["entry_id"] for line in lines}
    prev = sha256_hex(lines[-1]) if lines else GENESIS
    fresh = chain((e for e in entries if e["entry_id"] not in known), prev, _line)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # its user's only
    with os.fdopen(fd, "a", encoding="utf-8") as out:
        for linked in fresh:
            out.write(linked.text + "\n")
    return len(fresh)


def verify_ledger(path: Path) -> int:
    """Check the chain of a ledger file; returns its number of entries.

    Raises:
        LedgerError: a line is not JSON, or does not carry the hash of the line before it.
    """
    walk = ChainWalk()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            entry: dict[str, Any] = json.loads(line)
        except json.JSONDecodeError as err:
            raise LedgerError(f"{path}:{number}: not JSON ({err.msg})") from err
        if not walk.follows(entry.get("prev"), sha256_hex(line)):
            raise LedgerError(f"{path}:{number}: chain broken (the line before was changed, "
                              "removed or reordered)")
    return walk.count


def _line(entry: Mapping[str, Any]) -> str:
    """The ledger line of an entry (its ``prev`` included), as every release has written it."""
    return json.dumps(entry, sort_keys=True)


def _digest(entry: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(entry, sort_keys=True).encode()).hexdigest()
