"""Which model traffic a task's run records to or replays from, and a replay that missed.

Live, with ``--record DIR``, each goal's runs under a configuration append their exchanges to
``DIR/<configuration>/<task>.jsonl`` (the run-level ``--record`` machinery). Offline, a goal
replays ``DIR/<configuration>/<task>.jsonl`` of ``--replay DIR`` when there is one, else the
task's own ``replay`` (made under the full configuration, and tried under every one); a goal
with neither is skipped with the reason. An ablation changes the prompts, so a recording may
have no answer for a request it makes: such a run is *not scored* (a replay miss says nothing
of the model), and the report says why its row is missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workers.evaluation.configurations import Configuration
from workers.evaluation.suite import SuiteTask

MISS_MARKS = ("has no answer for this request", "ReplayMiss")
MISSED = ("replay miss: the recording has no answer for a request this configuration makes "
          "(its prompts differ from the recorded run's); run it live to score it")


@dataclass(frozen=True)
class Traffic:
    """Where live runs record (``record``) and offline runs replay (``replay``) per task."""

    record: Path | None = None
    replay: Path | None = None

    def file(self, folder: Path, task: SuiteTask, config: Configuration) -> Path:
        """``folder/<configuration>/<task>.jsonl``."""
        return folder / config.name / f"{task.id}.jsonl"

    def paths(self, task: SuiteTask, config: Configuration, base: Path, *,
              live: bool) -> tuple[Path | None, Path | None]:
        """(replay, record) of a run of ``task`` under ``config``; plans have neither."""
        if task.goal is None:
            return None, None
        if live:
            if self.record is None:
                return None, None
            kept = self.file(self.record, task, config)
            kept.parent.mkdir(parents=True, exist_ok=True)
            return None, kept
        if self.replay is not None and (kept := self.file(self.replay, task, config)).is_file():
            return kept, None
        return (base / task.replay if task.replay else None), None

    def why_skipped(self, task: SuiteTask, config: Configuration) -> str:
        """The one line saying why an offline goal does not run."""
        where = (f" (none in {self.file(self.replay, task, config)} nor in the suite)"
                 if self.replay else " in the suite")
        return f"no model key, and no recording{where}; set ANTHROPIC_API_KEY to run it live"


def replay_missed(error: str, document: Any) -> str:
    """``MISSED`` when the run failed because its recording had no answer, else ""."""
    said = error + (json.dumps(document) if document is not None else "")
    return MISSED if any(mark in said for mark in MISS_MARKS) else ""
