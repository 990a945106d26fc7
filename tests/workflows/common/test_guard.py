"""Patch guardrails, patch application and the patch checksum."""

from __future__ import annotations

from typing import Any

import pytest

from activities.patches.apply import PatchError, apply_patch, patch_checksum, sealed
from workflows.common.guard import check_patch
from workflows.contracts.plan import JobSpec, Resources, Scalar
from workflows.contracts.policy import ReviewPolicy
from workflows.contracts.reflection import Patch, PatchChange

POLICY = ReviewPolicy(max_timeout_s=3600, max_memory_mb=4096, max_cpus=4)


def job(args: dict[str, Scalar] | None = None, **fields: Any) -> JobSpec:
    base: dict[str, Any] = {"code": "print(1)", "source": "print(1)", "filename": "job.py",
                            "args": args if args is not None else {"batch_size": 64}}
    return JobSpec.model_validate({**base, **fields})


OLD = job(expected_artifacts=["out.csv"], expected_metrics=["rmse"],
          resources=Resources(memory_mb=1024, timeout_s=600, cpus=1))


def changed(**fields: Any) -> JobSpec:
    return OLD.model_copy(update=fields)


def test_a_narrow_patch_passes() -> None:
    assert check_patch(OLD, changed(args={"batch_size": 32}), POLICY) == []


@pytest.mark.parametrize(("new", "words"), [
    (OLD, "changes nothing"),
    (changed(source="import os", code="import os"), "changes source"),
    (changed(filename="other.py"), "changes filename"),
    (changed(entry="x.py", code=None), "changes entry"),
    (changed(requirements=["requests"]), "changes requirements"),
    (changed(resources=Resources(memory_mb=2048, timeout_s=600)), "never ask for more memory"),
    (changed(resources=Resources(memory_mb=1024, timeout_s=7200)),
     "beyond the policy's ceiling of 3600"),
    (changed(resources=Resources(memory_mb=1024, timeout_s=600, cpus=6)),
     "beyond the policy's ceiling of 4"),
    (changed(expected_artifacts=[]), "changes expected_artifacts"),
    (changed(expected_artifacts=["out.csv", "more.csv"]), "changes expected_artifacts"),
    (changed(expected_metrics=[]), "drops expected metrics rmse"),
    (changed(args={}), "removes argument 'batch_size'"),
    (changed(args={"batch_size": 32.0}), "changes type from int to float"),
    (changed(args={"batch_size": True}), "changes type from int to bool"),
    (changed(args={"batch_size": 64, "out": "/etc/cron.d/x"}), "looks like a path"),
    (changed(args={"batch_size": 64, "data": "../other/run"}), "looks like a path"),
    (changed(args={"batch_size": 64, "src": "https://example.org/x.csv"}), "URL"),
    (changed(args={"batch_size": 64, "peer": "10.0.0.5:8080"}), "URL or host"),
    (changed(args={"batch_size": 64, "api_host": "internal"}), "host or URL setting"),
    (changed(args={"batch_size": 64, "api_key": "abc"}), "credential"),
    (changed(args={"batch_size": 64, "db_password": "x"}), "credential"),
])
def test_every_guardrail_names_its_violation(new: JobSpec, words: str) -> None:
    violations = check_patch(OLD, new, POLICY)
    assert any(words in v for v in violations), violations


def test_raising_the_time_limit_within_the_ceiling_is_allowed() -> None:
    new = changed(resources=Resources(memory_mb=1024, timeout_s=1200))
    assert check_patch(OLD, new, POLICY) == []


def test_lowering_a_resource_already_over_the_ceiling_is_allowed() -> None:
    old = job(resources=Resources(memory_mb=16_000))
    new = old.model_copy(update={"resources": Resources(memory_mb=4096)})
    assert check_patch(old, new, POLICY) == []


def test_declaring_a_metric_is_allowed_and_plain_new_arguments_too() -> None:
    new = changed(expected_metrics=["rmse", "mae"], args={"batch_size": 64, "mode": "fast"})
    assert check_patch(OLD, new, POLICY) == []


def test_a_changed_credential_argument_is_refused() -> None:
    old = job({"token": "a", "batch_size": 2})
    new = old.model_copy(update={"args": {"token": "b", "batch_size": 2}})
    assert any("credential" in v for v in check_patch(old, new, POLICY))


# --- apply ---------------------------------------------------------------------------------


def test_apply_patch_sets_args_resources_and_metrics() -> None:
    patch = [PatchChange(field="args.batch_size", old_value=64, new_value=32),
             PatchChange(field="resources.timeout_s", old_value=600.0, new_value=900.0),
             PatchChange(field="expected_metrics", old_value=["rmse"], new_value=["rmse", "r2"])]
    new = apply_patch(OLD, patch)
    assert new.args == {"batch_size": 32} and new.resources.timeout_s == 900
    assert new.expected_metrics == ["rmse", "r2"] and OLD.args == {"batch_size": 64}


@pytest.mark.parametrize(("change", "words"), [
    (PatchChange(field="source", old_value="print(1)", new_value="x"), "cannot be applied"),
    (PatchChange(field="resources.gpus", old_value=None, new_value=1), "cannot be applied"),
    (PatchChange(field="args.batch_size", old_value=128, new_value=64), "expects"),
    (PatchChange(field="resources.memory_mb", old_value=1024, new_value=1), "invalid"),
])
def test_apply_patch_refuses_what_it_cannot_apply(change: PatchChange, words: str) -> None:
    with pytest.raises(PatchError, match=words):
        apply_patch(OLD, [change])


# --- checksum ------------------------------------------------------------------------------


def make_patch(new_value: int = 32) -> Patch:
    return Patch(patch_id="patch-1", task_id="t1", root_cause="out_of_memory",
                 changes=[PatchChange(field="args.batch_size", old_value=64,
                                      new_value=new_value)],
                 confidence=0.9, risk=0.08)


def test_patch_checksum_is_stable_and_ignores_its_own_field() -> None:
    a = sealed(make_patch())
    b = sealed(make_patch())
    assert a.sha256 == b.sha256 == patch_checksum(a)
    assert len(a.sha256) == 64
    assert patch_checksum(a.model_copy(update={"sha256": "x"})) == a.sha256


def test_patch_checksum_changes_with_content() -> None:
    assert sealed(make_patch(32)).sha256 != sealed(make_patch(16)).sha256
    moved = make_patch().model_copy(update={"confidence": 0.8})
    assert patch_checksum(moved) != patch_checksum(make_patch())


def test_a_sealed_patch_that_was_altered_is_not_applied() -> None:
    patch = sealed(make_patch(32))
    assert apply_patch(OLD, patch).args == {"batch_size": 32}
    altered = patch.model_copy(update={"changes": [PatchChange(
        field="args.batch_size", old_value=64, new_value=1)]})
    with pytest.raises(PatchError, match="does not match its sha256"):
        apply_patch(OLD, altered)
