"""The outcomes the extraction tests share: a sales-profile batch and its helpers."""

from __future__ import annotations

from datetime import UTC, datetime

from skills.extract import Extraction
from skills.extract.cases import action_type
from workflows.contracts.patterns import Skill, SkillParameter, SkillStep, slug
from workflows.contracts.plan import Check, JobSpec, Scalar
from workflows.contracts.reflection import PatchChange
from workflows.contracts.skills import TaskOutcome

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ACTION = "Profile the sales table and report column statistics"
SOURCE = (
    "from __future__ import annotations\n"
    "import json, sys\n"
    "import os.path\n"
    "import pandas as pd\n"
    "from sklearn.metrics import r2_score\n"
    "from . import helpers\n"
    "def main():\n"
    "    import numpy.linalg\n"
    "    return pd, r2_score, numpy.linalg, json, sys, os, helpers\n"
)
OOM = SkillStep(agent="executor", phase="execute",
                detail="out_of_memory: ran out of memory at 1024 MiB")
CLEAN = [SkillStep(agent="implementer", phase="implement"),
         SkillStep(agent="executor", phase="execute")]
HALVE = PatchChange(field="args.batch_size", old_value=64, new_value=32,
                    reason="halve batch_size to fit in 1024 MiB")


def outcome(n: int, status: str = "completed", *, batch: Scalar = 16, mode: str = "fast",
            source: str | None = SOURCE, filename: str = "profile.py", action: str = ACTION,
            fixes: list[PatchChange] | None = None, steps: list[SkillStep] | None = None,
            extra: dict[str, Scalar] | None = None, run: str | None = None) -> TaskOutcome:
    """Task ``n`` of the sales profile: a csv input, a batch size and a mode."""
    data = f"sales_q{n}.csv"
    job = JobSpec(code=source or "print(1)", source=source, filename=filename,
                  args={"data": data, "batch_size": batch, "mode": mode, "verbose": True,
                        **(extra or {})},
                  expected_artifacts=["report.html"], expected_metrics=["rows", "mean"])
    failed_steps = [*CLEAN[:1], OOM]
    return TaskOutcome(
        run_id=run or f"run-{n:02d}", task_id="t1", action=action, status=status, job=job,
        goal="Understand the quarterly sales", input_names=[data, "notes.txt"],
        acceptance_criteria=["rows > 0", "report written"],
        checks=[Check(metric="rows", op=">", value=0)] + (
            [Check(metric="mean", op=">=", value=n)] if n % 2 else []),
        fixes=fixes or [],
        steps=steps if steps is not None else (CLEAN if status == "completed" else failed_steps))


KIND = action_type(outcome(0))
"""The sales profile's kind: ``profile:sklearn|csv+txt|mean+rows``."""
NAME = slug(KIND)
"""The name of the sales profile's skill: its kind as a name."""


def sales_batch() -> list[TaskOutcome]:
    """Seven successes at batch size 8 or 16, three out-of-memory failures at 64."""
    ok = [(16, "fast"), (16, "exact"), (16, "fast"), (8, "fast"), (16, "fast"), (8, "exact"),
          (16, "fast")]
    return ([outcome(i, batch=b, mode=m) for i, (b, m) in enumerate(ok)]
            + [outcome(10 + i, "failed", batch=64) for i in range(3)])


def only(result: Extraction) -> Skill:
    assert len(result.new) == 1, result.skipped
    return result.new[0]


def param(skill: Skill, name: str) -> SkillParameter:
    found = skill.pattern.parameter(name)
    assert found is not None, f"no parameter {name}"
    return found
