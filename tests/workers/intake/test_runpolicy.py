"""A run policy file sets the package rules job environments are reviewed against."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
