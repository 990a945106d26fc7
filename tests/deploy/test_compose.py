"""The deployment files describe the system Assay's code expects.

``docker-compose config`` (Debian package ``docker-compose``) validates and resolves the
compose file; the assertions then check it runs every pool as ``worker --pool <name>`` with
the settings the workers read, that pools share no read-write volume (artifacts travel
through the S3 store) and that health checks ask the worker (``/healthz``). The Kubernetes
manifests are validated against Kubernetes' own schemas (``kubernetes-validate``, strict) and,
with the Prometheus configuration and the Dockerfile, checked against the same pool names,
settings and search attributes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from workers.settings import Settings
from workflows.constants import SEARCH_ATTRIBUTES
from workflows.contracts.pools import Pool

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
POOLS = [pool.value for pool in Pool]
METRICS_PORT = 9464


def load_yaml(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc]


def compose_binary() -> str:
    found = shutil.which("docker-compose")
    if found is None:
        message = ("docker-compose is not installed, so the compose file cannot be validated: "
                   "install it with `apt-get install -y docker-compose`")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def services() -> dict[str, dict[str, Any]]:
    """The services of docker-compose.yml as ``docker-compose config`` resolves them."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp")}
    done = subprocess.run(
        [compose_binary(), "--file", str(ROOT / "docker-compose.yml"), "config"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, f"docker-compose config rejected the file:\n{done.stderr}"
    config: dict[str, Any] = yaml.safe_load(done.stdout)
    return config["services"]


def settings_field(variable: str) -> bool:
    """Whether an ``ASSAY_*`` environment variable names a real Settings field."""
    return variable.removeprefix("ASSAY_").lower() in Settings.model_fields


def test_compose_defines_the_whole_system(services: dict[str, dict[str, Any]]) -> None:
    expected = {"temporal", "temporal-ui", "postgres", "qdrant", "prometheus", "objects",
                "objects-setup", *POOLS}
    assert expected <= set(services), f"missing: {sorted(expected - set(services))}"
    assert services["temporal"]["environment"]["DB"] == "postgres12"
    assert services["temporal"]["image"].startswith("temporalio/server:")
    assert services["temporal-ui"]["image"].startswith("temporalio/ui:")
    assert services["qdrant"]["image"].startswith("qdrant/qdrant:")
    assert services["prometheus"]["image"].startswith("prom/prometheus:")


@pytest.mark.parametrize("pool", POOLS)
def test_each_pool_runs_its_own_worker(services: dict[str, dict[str, Any]], pool: str) -> None:
    service = services[pool]
    assert service["command"] == ["worker", "--pool", pool]
    assert service["build"]["dockerfile"] == "deploy/Dockerfile"
    env: dict[str, Any] = service["environment"]
    assert env["ASSAY_TEMPORAL_ADDRESS"] == "temporal:7233"
    assert env["ASSAY_DATABASE_URL"].startswith("postgresql+asyncpg://assay:")
    assert env["ASSAY_DATABASE_URL"].endswith("@postgres:5432/assay")
    assert env["ASSAY_QDRANT_URL"] == "http://qdrant:6333"
    assert env["ASSAY_STORE_URL"].startswith("s3://")
    assert env["ASSAY_STORE_ENDPOINT_URL"] == "http://objects:9000"
    assert int(env["ASSAY_METRICS_PORT"]) == METRICS_PORT
    unknown = [name for name in env if name.startswith("ASSAY_") and not settings_field(name)]
    assert not unknown, f"{pool}: not Assay settings: {unknown}"
    assert f"127.0.0.1:{METRICS_PORT}/healthz" in " ".join(service["healthcheck"]["test"])
    assert service["depends_on"] == {
        "temporal-setup": {"condition": "service_completed_successfully"},
        "postgres": {"condition": "service_healthy"},
        "qdrant": {"condition": "service_healthy"},
        "objects-setup": {"condition": "service_completed_successfully"},
    }


def test_model_key_reaches_only_the_agents_pool(services: dict[str, dict[str, Any]]) -> None:
    holders = [name for name, svc in services.items()
               if "ANTHROPIC_API_KEY" in svc.get("environment", {})]
    assert holders == [Pool.AGENTS.value]


def test_only_the_sandbox_may_create_namespaces(services: dict[str, dict[str, Any]]) -> None:
    sandbox = services[Pool.SANDBOX.value]
    assert {"seccomp=unconfined", "apparmor=unconfined"} <= set(sandbox["security_opt"])
    assert not sandbox.get("privileged", False)
    assert sandbox["environment"]["ASSAY_SANDBOX_ISOLATION"] == "bwrap"
    others = [name for name, svc in services.items()
              if name != Pool.SANDBOX.value and "security_opt" in svc]
    assert not others, f"only the sandbox should relax security profiles: {others}"


def named_volumes(service: dict[str, Any]) -> set[str]:
    """The named volumes a service mounts (not anonymous ones, not host paths)."""
    found: set[str] = set()
    for mount in service.get("volumes", []):
        source, _, target = str(mount).partition(":")
        if target and not source.startswith((".", "/")):
            found.add(source)
    return found


def test_pools_share_no_volume(services: dict[str, dict[str, Any]]) -> None:
    holders: dict[str, list[str]] = {}
    for pool in POOLS:
        for volume in named_volumes(services[pool]):
            holders.setdefault(volume, []).append(pool)
    assert {v: p for v, p in holders.items() if len(p) > 1} == {}
    assert named_volumes(services[Pool.SANDBOX.value]) == set()  # per-container scratch
    assert services[Pool.SANDBOX.value]["volumes"] == ["/data"]


def test_start_order_follows_health(services: dict[str, dict[str, Any]]) -> None:
    for name in ("postgres", "temporal", "qdrant", "objects", "prometheus", *POOLS):
        assert "healthcheck" in services[name], f"{name} has no health check"
    assert services["temporal-schema"]["depends_on"] == {
        "postgres": {"condition": "service_healthy"}}
    assert services["temporal"]["depends_on"] == {
        "temporal-schema": {"condition": "service_completed_successfully"}}
    assert services["temporal-setup"]["depends_on"] == {
        "temporal": {"condition": "service_healthy"}}
    assert services["objects-setup"]["depends_on"] == {
        "objects": {"condition": "service_healthy"}}


def test_images_are_pinned(services: dict[str, dict[str, Any]]) -> None:
    for name, service in services.items():
        image: str = service["image"]
        tag = image.rpartition(":")[2] if ":" in image else ""
        assert tag and tag != "latest" and "/" not in tag, f"{name}: unpinned image {image}"


def test_prometheus_scrapes_every_pool_on_its_metrics_port() -> None:
    (config,) = load_yaml(DEPLOY / "prometheus.yml")
    scraped: dict[str, int] = {}
    for job in config["scrape_configs"]:
        for sd in job.get("dns_sd_configs", []):
            for name in sd["names"]:
                scraped[name] = sd["port"]
    assert scraped == dict.fromkeys(POOLS, METRICS_PORT)
    (compose,) = load_yaml(ROOT / "docker-compose.yml")
    assert int(compose["x-assay-env"]["ASSAY_METRICS_PORT"]) == METRICS_PORT


def test_temporal_setup_registers_every_search_attribute() -> None:
    script = (DEPLOY / "temporal" / "setup-namespace.sh").read_text(encoding="utf-8")
    pairs = re.search(r"for attribute in ([A-Za-z= ]+); do", script)
    assert pairs is not None, "setup-namespace.sh no longer loops over the attributes"
    declared = dict(pair.split("=") for pair in pairs.group(1).split())
    assert declared == SEARCH_ATTRIBUTES
    assert '--type "$type"' in script


def k8s_deployments() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for path in sorted((DEPLOY / "k8s").glob("*.yaml")):
        for doc in load_yaml(path):
            if doc["kind"] == "Deployment":
                found[doc["metadata"]["name"]] = doc
    return found


def worker_container(deployment: dict[str, Any]) -> dict[str, Any]:
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container


@pytest.mark.parametrize("pool", POOLS)
def test_each_pool_has_a_kubernetes_deployment(pool: str) -> None:
    deployment = k8s_deployments()[pool]
    assert deployment["metadata"]["namespace"] == "assay"
    container = worker_container(deployment)
    assert container["args"] == ["worker", "--pool", pool]
    assert container["envFrom"] == [
        {"configMapRef": {"name": "assay-settings"}},
        {"secretRef": {"name": "assay-store"}},
        {"configMapRef": {"name": "assay-security", "optional": True}},
    ]
    assert container["ports"] == [{"name": "metrics", "containerPort": METRICS_PORT}]
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    kinds = {name for volume in pod["volumes"] for name in volume if name != "name"}
    assert kinds <= {"emptyDir", "secret"}, f"{pool}: volumes beyond its own pod: {kinds}"
    optional = [v["secret"].get("optional") for v in pod["volumes"] if "secret" in v]
    assert optional and all(optional), "TLS and codec Secrets must be optional mounts"


def test_kubernetes_manifests_pass_kubernetes_schemas() -> None:
    import kubernetes_validate

    paths = [*sorted((DEPLOY / "k8s").glob("*.yaml")),
             *sorted((DEPLOY / "k8s" / "examples").glob("*.yaml"))]
    checked = 0
    for path in paths:
        for doc in load_yaml(path):
            if doc["kind"] == "Kustomization":
                continue
            kubernetes_validate.validate(doc, "1.33.0", strict=True)  # raises on an error
            checked += 1
    assert checked >= len(POOLS) + 3


def test_kubernetes_schema_validation_catches_a_broken_manifest() -> None:
    import kubernetes_validate

    deployment = k8s_deployments()[Pool.SANDBOX.value]
    worker_container(deployment)["readinessProbe"]["periodSecond"] = 10  # misspelt
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, "1.33.0", strict=True)


def test_kubernetes_model_key_is_referenced_only_by_agents() -> None:
    holders = [
        name for name, deployment in k8s_deployments().items()
        for env in worker_container(deployment).get("env", [])
        if env.get("valueFrom", {}).get("secretKeyRef", {}).get("name") == "assay-anthropic"
    ]
    assert holders == [Pool.AGENTS.value]
    assert set(k8s_deployments()) == set(POOLS)


def test_kubernetes_settings_are_assay_settings_and_listed() -> None:
    (configmap,) = load_yaml(DEPLOY / "k8s" / "configmap.yaml")
    (security,) = load_yaml(DEPLOY / "k8s" / "examples" / "security.yaml")
    unknown = [name for name in [*configmap["data"], *security["data"]]
               if not settings_field(name)]
    assert not unknown, f"not Assay settings: {unknown}"
    assert configmap["data"]["ASSAY_STORE_URL"].startswith("s3://")
    (kustomization,) = load_yaml(DEPLOY / "k8s" / "kustomization.yaml")
    manifests = {p.name for p in (DEPLOY / "k8s").glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization["resources"]) == manifests


def test_dockerfile_installs_the_project_for_a_non_root_user() -> None:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^FROM \$\{PYTHON_IMAGE\}$", text, re.MULTILINE)
    assert "ARG PYTHON_IMAGE=python:3.11-slim" in text
    assert "bubblewrap" in text and "pip install ." in text
    assert 'ENTRYPOINT ["assay"]' in text
    user = re.findall(r"^USER (\S+)$", text, re.MULTILINE)
    assert user and not user[-1].startswith(("root", "0:", "0")), user
    for package in installed_packages():
        assert f"COPY {package} ./{package}" in text, f"{package} is not copied into the image"


def installed_packages() -> list[str]:
    """The top-level packages ``pip install .`` installs (pyproject's package list)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]]
