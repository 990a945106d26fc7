"""Skills and folders the folder tests share: a varied library, hand-made folders."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from skills.folders import SkillFileError, import_skills
from workflows.contracts.patterns import (
    Preconditions,
    Skill,
    SkillMetrics,
    SkillParameter,
    SkillPattern,
    SkillSignature,
    SkillStatus,
    SkillStep,
)
from workflows.contracts.plan import Check, JobSpec, Resources
from workflows.contracts.reflection import PatchChange

HANDWRITTEN = Path(__file__).resolve().parents[2] / "data" / "skills" / "handwritten"
JOB_SOURCE = "import sys\n\nprint(sys.argv)\r\n# windows line ending kept\n"


def job_skill(version: int = 1, status: SkillStatus = "active") -> Skill:
    job = JobSpec(entry="jobs/compare.py", source=JOB_SOURCE, filename="compare.py",
                  args={"data": "t.csv", "column": "len", "seed": 7, "alpha": 0.05,
                        "exact": True},
                  expected_artifacts=["comparison.json"], expected_metrics=["p_value"],
                  resources=Resources(memory_mb=256, timeout_s=60), requirements=["numpy>=1.26"])
    pattern = SkillPattern(
        name="compare-lengths", version=version,
        description="Compare | lengths between two groups: 'quoted', ünïcode and: colons",
        context="When a goal asks whether two groups differ.", action="Compare {column}",
        acceptance_criteria=["p_value < 0.05"],
        signature=SkillSignature(keywords=["compare"], input_types=["csv"]),
        preconditions=Preconditions(input_types=["csv"], imports=["numpy"], keywords=["compare"]),
        parameters=[
            SkillParameter(name="data", type="file_path", target="input", default="t.csv",
                           extensions=["csv"]),
            SkillParameter(name="seed", type="integer", default=7, minimum=0, maximum=2**31),
            SkillParameter(name="alpha", type="number", default=0.05, minimum=0.001, maximum=0.5),
            SkillParameter(name="exact", type="boolean", default=True),
            SkillParameter(name="column", type="enum", default="len", options=["len", "wid"]),
        ],
        steps=[SkillStep(agent="planner", phase="plan", detail="chose a permutation test")],
        job=job, checks=[Check(metric="p_value", op="<", value=0.05)],
        contrast="Successes fixed the seed; failures did not.", tags=["stats"],
        source_runs=["run-1", "run-2"])
    metrics = SkillMetrics(retrieved=9, used=4, succeeded=3, total_duration_s=12.5,
                           total_cost_usd=0.25, last_used=datetime(2025, 3, 1, 12, tzinfo=UTC),
                           evidence_successes=2, evidence_failures=1)
    return Skill(pattern=pattern, status=status, metrics=metrics, confidence=0.87,
                 origin="extracted", note="approved")


def guideline_skill() -> Skill:
    pattern = SkillPattern(name="read-the-docs", description="Read the data dictionary first.",
                           guideline="Open the dictionary.\n\nCheck units before any test.")
    return Skill(pattern=pattern, status="candidate", confidence=0.4)


def subagent_skill() -> Skill:
    job = JobSpec(code="print('train')\n", source="print('train')\n", filename="job.py",
                  args={"batch_size": 64})
    pattern = SkillPattern(
        name="train-small-models", kind="subagent", version=3,
        description="A specialist that trains small models and recovers from memory errors.",
        guideline="Halve the batch size on an out-of-memory error.", job=job,
        recovery=[PatchChange(field="args.batch_size", old_value=64, new_value=32,
                              reason="out of memory"),
                  PatchChange(field="resources.timeout_s", old_value=60.0, new_value=120.0)])
    return Skill(pattern=pattern, status="trial", share=0.2, confidence=1.0, origin="merged")


def library() -> list[Skill]:
    return [job_skill(1, "retired"), job_skill(2, "active"), job_skill(3, "candidate"),
            guideline_skill(), subagent_skill()]


def front_matter(folder: Path) -> dict[str, Any]:
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n")[1])


def write_folder(root: Path, folder: str, skill_md: str | bytes,
                 files: dict[str, str | bytes] | None = None) -> Path:
    path = root / folder
    path.mkdir(parents=True)
    data = skill_md.encode() if isinstance(skill_md, str) else skill_md
    (path / "SKILL.md").write_bytes(data)
    for name, content in (files or {}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def simple(name: str, description: str = "Does one thing.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\nBody.\n"


def problems_of(folder: Path) -> list[str]:
    with pytest.raises(SkillFileError) as caught:
        import_skills(folder)
    return caught.value.problems
