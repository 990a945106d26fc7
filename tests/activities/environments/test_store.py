"""Resolving and provisioning environments from a local wheelhouse, and the reasons for refusals."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest

from activities.environments import Catalog, EnvironmentProblem, Environments, Sources
from tests.activities.environments.wheels import make_wheel
from workflows.contracts.environments import PreparedEnvironment


async def test_provisioning_resolves_pins_and_a_second_request_installs_nothing(
        environments: Environments) -> None:
    first = await environments.prepare("tiny", [])
    assert first.name == "tiny" and first.pins == ["alpha==1.0", "beta==2.0"]
    assert not first.reused and environments.installs == 1
    path = environments.installed(first.digest)
    assert path is not None
    record = json.loads((path / "environment.json").read_text())
    assert record["pins"] == first.pins and record["digest"] == first.digest

    again = await Environments(environments.root, catalog=environments.catalog,
                               sources=environments.sources).prepare("tiny", [])
    assert again.reused and again.digest == first.digest
    assert json.loads((path / "environment.json").read_text())["created"] == record["created"]
    assert environments.installs == 1

    done = subprocess.run([environments.interpreter(path), "-I", "-c",
                           "import alpha, beta; print(alpha.VALUE, beta.VALUE)"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "alpha 1.0 beta 2.0"


async def test_a_resolved_lock_is_reused_without_the_index(environments: Environments,
                                                           offline_root: Path) -> None:
    lock = await environments.resolve(environments.spec(None, ["alpha"]))
    (offline_root / "wheelhouse").rename(offline_root / "gone")
    again = await environments.resolve(environments.spec(None, ["Alpha"]))
    assert again.pins == lock.pins and again.digest == lock.digest


@pytest.mark.parametrize(("requirements", "kind", "words"), [
    (["nosuchpkg"], "not_found", "package 'nosuchpkg' was not found in the wheelhouse"),
    (["alpha", "gamma"], "conflict", "conflicting pins"),
    (["beta==3.0"], "conflict", "beta"),
])
async def test_bad_requirements_end_with_one_clear_reason(
        environments: Environments, requirements: list[str], kind: str, words: str) -> None:
    with pytest.raises(EnvironmentProblem) as caught:
        await environments.prepare(None, requirements)
    assert caught.value.kind == kind, caught.value.reason
    assert words in caught.value.reason
    assert "\n" not in caught.value.reason
    assert environments.installs == 0


async def test_an_unknown_environment_name_lists_the_known_ones(
        environments: Environments) -> None:
    with pytest.raises(EnvironmentProblem, match=r"no environment named 'nope'.*science, tiny"):
        await environments.prepare("nope", [])


async def test_an_index_that_cannot_be_reached_is_said_so(offline_root: Path) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/simple"
    environments = Environments(offline_root / "environments",
                                sources=Sources(index_url=url), timeout_s=60)
    with pytest.raises(EnvironmentProblem) as caught:
        await environments.prepare(None, ["alpha"])
    assert caught.value.kind == "unreachable"
    assert f"the package index {url} cannot be reached" in caught.value.reason


def test_an_operator_file_with_a_url_is_refused(offline_root: Path) -> None:
    (offline_root / "evil.txt").write_text("alpha @ https://example.org/alpha.whl\n")
    with pytest.raises(EnvironmentProblem, match="direct URL"):
        Catalog(offline_root).requirements("evil")


def test_the_science_set_ships_the_scientific_stack() -> None:
    wanted = Catalog().requirements("science")
    assert {"numpy", "pandas", "scipy", "statsmodels", "scikit-learn", "matplotlib"} <= set(wanted)


async def test_ensure_refuses_a_record_whose_pins_do_not_match_its_digest(
        environments: Environments) -> None:
    forged = PreparedEnvironment(name="tiny", digest="0" * 64, python=environments.python_version,
                                 pins=["alpha==1.0", "beta==2.0"])
    with pytest.raises(EnvironmentProblem, match="other pins"):
        await environments.ensure(forged)


async def test_ensure_provisions_a_prepared_environment_missing_on_this_host(
        environments: Environments, offline_root: Path) -> None:
    prepared = await environments.prepare(None, ["alpha"])
    other = Environments(offline_root / "elsewhere", sources=environments.sources)
    path = await other.ensure(prepared)
    assert path.name == prepared.digest and other.installs == 1
    assert Path(other.interpreter(path)).exists()


async def test_a_named_set_with_additions_records_them_and_when_it_was_last_used(
        environments: Environments) -> None:
    assert environments.sources.find_links is not None
    make_wheel(environments.sources.find_links, "delta", "1.0")
    plain = await environments.prepare("tiny", [])
    assert plain.added == [] and plain.title() == plain.label()
    more = await environments.prepare("tiny", ["delta"])
    assert more.added == ["delta"] and more.label() == f"tiny@{more.digest[:12]}"
    assert more.title() == f"tiny + delta@{more.digest[:12]}"
    custom = await environments.prepare(None, ["delta"])
    assert custom.added == ["delta"] and custom.title() == custom.label()
    same = await environments.prepare(None, ["alpha"])  # the very pins of tiny: its record
    assert same.reused and same.added == [] and same.title() == plain.label()
    records = {r["digest"]: r for r in environments.records()}
    assert records[more.digest]["last_used"] >= records[more.digest]["created"]


def test_the_installer_inherits_no_secret_of_the_worker(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from activities.environments.installer import installer_env

    monkeypatch.setenv("ASSAY_ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("ASSAY_DATABASE_URL", "postgresql://u:pw@h/db")
    monkeypatch.setenv("UV_INDEX_URL", "https://elsewhere.example/simple")
    monkeypatch.setenv("https_proxy", "http://proxy.local:3128")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    env = installer_env(tmp_path / "cache")

    assert "sk-ant-secret" not in env.values() and "ASSAY_DATABASE_URL" not in env
    assert "UV_INDEX_URL" not in env  # the index comes from Assay's settings only
    assert env["https_proxy"] == "http://proxy.local:3128" and env["PATH"] == "/usr/bin:/bin"
    assert env["UV_CACHE_DIR"] == str(tmp_path / "cache") and env["UV_NO_CONFIG"] == "1"


async def test_a_package_whose_files_nest_too_deep_is_refused_with_its_reason(
        environments: Environments) -> None:
    house = environments.sources.find_links
    assert house is not None
    make_wheel(house, "deep", "1.0", extra={"deep_data/" + "d/" * 1500 + "x.txt": b"x"})
    with pytest.raises(EnvironmentProblem) as refused:
        await environments.prepare(None, ["deep"])
    assert refused.value.kind == "install_failed"
    assert "the installed packages are refused" in refused.value.reason
    assert "nested more than 64 directories deep" in refused.value.reason
    assert not list(environments.root.glob(".staging-*")), "its staging tree was removed"
