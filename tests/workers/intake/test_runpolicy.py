"""A run policy file sets the package rules job environments are reviewed against, and tiers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from workers.intake.runpolicy import PolicyError, build_policy
from workers.settings import Settings


def test_a_policy_file_sets_the_package_rules_and_bad_names_are_refused(tmp_path: Path) -> None:
    settings = Settings.model_validate({"data_dir": tmp_path})
    good = tmp_path / "policy.json"
    good.write_text(json.dumps({"review": {"packages": {"block": ["requests"],
                                                        "allow": ["numpy", "pandas"]}}}))
    policy = build_policy(settings, policy_file=good)
    assert policy.review.packages.block == ["requests"]
    assert policy.review.packages.allow == ["numpy", "pandas"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"review": {"packages": {"block": ["../x @ http://e"]}}}))
    with pytest.raises(PolicyError, match=r"review\.packages\.block"):
        build_policy(settings, policy_file=bad)


def test_tiering_comes_from_the_settings_then_the_policy_file_and_a_bad_one_is_refused(
        tmp_path: Path) -> None:
    settings = Settings.model_validate({"data_dir": tmp_path, "tiering": "full"})
    assert build_policy(settings).tiering == "full"
    light = tmp_path / "light.json"
    light.write_text(json.dumps({"tiering": "light"}))
    assert build_policy(settings, policy_file=light).tiering == "light"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tiering": "medium"}))
    with pytest.raises(PolicyError, match=r"bad\.json: invalid policy:\n.*tiering.*'auto', "
                                          r"'light' or 'full'"):
        build_policy(settings, policy_file=bad)


def test_a_bad_tiering_setting_is_refused_naming_its_variable(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as refused:
        Settings.model_validate({"data_dir": tmp_path, "tiering": "medium"})
    assert "ASSAY_TIERING: Input should be 'auto', 'light' or 'full'" in \
        Settings.describe_errors(refused.value)
