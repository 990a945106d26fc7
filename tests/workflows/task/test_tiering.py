"""The tier rules (``workflows.task.tiering``) at their edges, and how label and policy combine."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from workflows.contracts.plan import Decision, InputFile, JobSpec
from workflows.contracts.policy import RunPolicy
from workflows.task import tiering as t


def code(lines: int, imports: tuple[str, ...] = ()) -> str:
    """``lines`` non-blank lines of source, the first ones importing ``imports``."""
    head = [f"import {m}" for m in imports]
    return "\n".join([*head, *(f"x{i} = {i}" for i in range(lines - len(head)))]) + "\n\n"


def job(lines: int = 10, imports: tuple[str, ...] = (), **fields: Any) -> JobSpec:
    source = code(lines, imports)
    return JobSpec.model_validate({"code": source, "source": source, "filename": "job.py",
                                   **fields})


def decision(size: int = 0, **fields: Any) -> Decision:
    inputs = [InputFile(name="d.csv", path="/d.csv", sha256="a" * 64, size=size)] if size else []
    return Decision.model_validate({"task_id": "a", "priority": "MEDIUM", "action": "fit",
                                    "acceptance_criteria": ["done"], "resolved_inputs": inputs,
                                    **fields})


def tier(d: Decision | None = None, j: JobSpec | None = None, mode: Any = "auto") -> str:
    return t.classify(mode, d or decision(), j if j is not None else job()).tier


def test_a_small_standard_library_job_on_small_data_is_light() -> None:
    result = t.classify("auto", decision(), job())
    assert (result.tier, result.by, result.reasons) == ("light", "rules", [])


@pytest.mark.parametrize(("lines", "expected"), [(t.LIGHT_LINES, "light"),
                                                 (t.LIGHT_LINES + 1, "full")])
def test_lines_edge_of_the_sizing_rule(lines: int, expected: str) -> None:
    assert tier(j=job(lines)) == expected


def test_blank_lines_do_not_count() -> None:
    assert t.source_lines(job(5)) == 5


@pytest.mark.parametrize(("imports", "expected"), [
    (("numpy", "scipy", "pandas"), "light"),
    (("numpy", "scipy", "pandas", "sklearn"), "full"),
    (("numpy", "scipy", "pandas", "json", "os.path", "csv"), "light")])
def test_imports_outside_the_standard_library_edge(imports: tuple[str, ...],
                                                   expected: str) -> None:
    assert tier(j=job(20, imports)) == expected


def test_from_imports_and_submodules_count_once_and_relative_ones_never() -> None:
    source = "from scipy import stats\nimport scipy.optimize\nfrom . import local\n"
    assert t.outside_imports(source) == ["scipy"]
    assert t.outside_imports("def broken(:\n") == []


@pytest.mark.parametrize(("size", "expected"), [(t.LIGHT_DATA_BYTES, "light"),
                                                (t.LIGHT_DATA_BYTES + 1, "full")])
def test_data_size_edge_of_the_sizing_rule(size: int, expected: str) -> None:
    assert tier(decision(size)) == expected


@pytest.mark.parametrize(("deps", "expected"), [(["b", "c"], "light"), (["b", "c", "d"], "full")])
def test_dependencies_edge(deps: list[str], expected: str) -> None:
    assert tier(decision(dependencies=deps)) == expected


def test_a_hypothesis_evidence_or_an_unknown_source_is_full() -> None:
    assert tier(decision(hypothesis="h1")) == "full"
    unknown = JobSpec.model_validate({"entry": "fit.py"})
    assert t.classify("auto", decision(), unknown).reasons == ["job source not known"]


@pytest.mark.parametrize(("fields", "edge"), [
    ({"resources": {"timeout_s": t.HEAVY_TIMEOUT_S}}, {"resources": {"timeout_s": 3601}}),
    ({"resources": {"cpus": t.HEAVY_CPUS}}, {"resources": {"cpus": 2.5}}),
    ({"resources": {"memory_mb": t.HEAVY_MEMORY_MB}}, {"resources": {"memory_mb": 4097}}),
    ({}, {"requirements": ["numpy==2.0"]})])
def test_heavy_job_rules_at_their_edges_beat_a_light_label(fields: dict[str, Any],
                                                           edge: dict[str, Any]) -> None:
    light = decision(complexity="light")
    assert tier(light, job(**fields)) == "light"
    result = t.classify("auto", light, job(**edge))
    assert (result.tier, result.by) == ("full", "rules") and result.reasons


def test_heavy_lines_and_data_edges_beat_a_light_label() -> None:
    light = decision(complexity="light")
    assert tier(light, job(t.HEAVY_LINES)) == "light"
    assert tier(light, job(t.HEAVY_LINES + 1)) == "full"
    assert tier(decision(t.HEAVY_DATA_BYTES, complexity="light")) == "light"
    assert tier(decision(t.HEAVY_DATA_BYTES + 1, complexity="light")) == "full"


def test_branches_are_heavy() -> None:
    branched = decision(complexity="light", branches=[{"name": "b", "set": {"args.k": 1}}])
    assert tier(branched) == "full"


def test_a_label_raises_to_full_and_lowers_only_what_sizing_rules_call_full() -> None:
    assert t.classify("auto", decision(complexity="full"), job()).by == "label"
    assert tier(decision(complexity="full")) == "full"
    big = job(t.LIGHT_LINES + 1)
    assert tier(j=big) == "full"
    assert tier(decision(complexity="light"), big) == "light"


def test_the_policy_forces_either_tier() -> None:
    heavy = job(requirements=["numpy==2.0"])
    assert t.classify("light", decision(), heavy) == t.Classification("light", "policy")
    assert t.classify("full", decision(), job()) == t.Classification("full", "policy")


def test_a_bad_tiering_value_is_refused_naming_the_choices() -> None:
    with pytest.raises(ValidationError, match="'auto', 'light' or 'full'"):
        RunPolicy.model_validate({"tiering": "medium"})
    assert RunPolicy().tiering == "auto"


def test_an_unset_label_leaves_the_decisions_dump_as_before() -> None:
    assert "complexity" not in decision().model_dump()
    assert decision(complexity="light").model_dump()["complexity"] == "light"
