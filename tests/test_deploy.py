"""The deployment files, checked without a Docker engine or a cluster: every manifest validates
against the Kubernetes schemas, each overlay renders, the Compose file validates, every command
and environment variable they name exists in the code (and is documented), and every service
starts with the environment the manifests give it and reports SERVING."""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

import games
from runtime import keys
from runtime.launch import wait_serving
from runtime.localredis import free_port
from wire.api import LOBBY_SERVICE, game_apis

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
OVERLAYS = ["dev", "prod"]
KUBERNETES_VERSION = "1.32.0"
COMPOSE_SCHEMA = ROOT / ".tools" / "compose_spec.json"
SOURCES = [
    path
    for package in ("services", "gateway", "runtime", "wire")
    for path in ROOT.glob(f"{package}/**/*.py")
]


def render(overlay: str) -> list[dict[str, Any]]:
    local = ROOT / ".tools" / "bin" / "kubectl"
    kubectl = shutil.which("kubectl") or (str(local) if local.exists() else None)
    assert kubectl, "kubectl is needed to render the kustomize overlays (make setup fetches it)"
    out = subprocess.run(
        [kubectl, "kustomize", str(DEPLOY / "k8s" / "overlays" / overlay)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    return data


def workloads(docs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    return (d for d in docs if d["kind"] in ("Deployment", "StatefulSet"))


def containers(docs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for workload in workloads(docs):
        yield from workload["spec"]["template"]["spec"]["containers"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_renders_and_validates(overlay: str) -> None:
    docs = render(overlay)
    for doc in docs:
        if doc["apiVersion"].startswith("keda.sh/"):
            continue  # a KEDA custom resource: checked below
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    kinds = [(d["kind"], d["metadata"]["name"]) for d in docs]
    for name in ["gateway", "lobby", *games.names()]:
        for kind in ("Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler"):
            assert (kind, name) in kinds, f"{overlay}: no {kind} {name}"
    assert ("Deployment", "bots") in kinds
    assert ("Deployment", "matchmaker") in kinds
    assert ("PodDisruptionBudget", "bots") in kinds
    assert ("StatefulSet", "redis") in kinds
    assert ("ConfigMap", "tabletop-config") in kinds


def test_prod_scales_bot_workers_on_their_stream_lag() -> None:
    (scaled,) = [d for d in render("prod") if d["kind"] == "ScaledObject"]
    assert scaled["apiVersion"] == "keda.sh/v1alpha1"
    assert scaled["spec"]["scaleTargetRef"]["name"] == "bots"
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "redis-streams"
    assert trigger["metadata"]["stream"] == keys.BOT_TURNS
    assert trigger["metadata"]["consumerGroup"] == keys.BOT_GROUP
    assert int(trigger["metadata"]["lagCount"]) > 0
    (bots,) = [
        d for d in render("prod") if d["kind"] == "Deployment" and d["metadata"]["name"] == "bots"
    ]
    assert "replicas" not in bots["spec"], "KEDA owns the bot workers' replica count"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_workloads_are_locked_down_and_probed(overlay: str) -> None:
    docs = render(overlay)
    for workload in workloads(docs):
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        for container in pod["containers"]:
            security = container["securityContext"]
            assert security["readOnlyRootFilesystem"] is True
            assert security["allowPrivilegeEscalation"] is False
            assert security["capabilities"]["drop"] == ["ALL"]
            assert container["resources"]["requests"]
            assert container["resources"]["limits"]
            assert container["readinessProbe"]
            assert container["livenessProbe"]
            if workload["kind"] == "Deployment":
                assert "grpc" in container["readinessProbe"]
                assert "grpc" in container["livenessProbe"]
    for doc in docs:
        if doc["kind"] == "Service" and doc["metadata"]["name"] in games.names():
            assert doc["spec"]["clusterIP"] == "None", "game services must be headless"


def test_compose_file_validates() -> None:
    assert COMPOSE_SCHEMA.exists(), "run `make setup` to fetch the Compose schema"
    # The schema names draft 2019-09 in a form jsonschema does not look up by itself.
    jsonschema.Draft201909Validator(json.loads(COMPOSE_SCHEMA.read_text())).validate(compose())


def _commands() -> set[tuple[str, ...]]:
    commands = {
        tuple(service["command"])
        for name, service in compose()["services"].items()
        if name != "redis"
    }
    for overlay in OVERLAYS:
        commands |= {tuple(c["args"]) for c in containers(render(overlay)) if c["name"] != "redis"}
    return commands


def test_every_command_exists() -> None:
    commands = _commands()
    assert {
        ("gateway",),
        ("services.bots",),
        ("services.matchmaker",),
        ("services.lobby",),
        *(("services.game", g) for g in games.names()),
    } <= commands
    for module, *args in commands:
        assert importlib.util.find_spec(f"{module}.__main__") is not None, module
        assert all(arg in games.names() for arg in args), args


def _variables() -> set[str]:
    names: set[str] = set()
    for name, service in compose()["services"].items():
        if name != "redis":
            names |= set(service.get("environment", {}))
    for overlay in OVERLAYS:
        docs = render(overlay)
        for doc in docs:
            if doc["kind"] in ("ConfigMap", "Secret"):
                names |= set(doc.get("data", {}))
        for container in containers(docs):
            names |= {e["name"] for e in container.get("env", [])}
    return names


def test_every_variable_is_read_by_the_code_and_documented() -> None:
    code = "\n".join(path.read_text() for path in SOURCES)
    reference = (ROOT / "docs" / "operations.md").read_text()
    for name in _variables():
        match = re.fullmatch(r"([A-Z]+)_ADDR", name)
        read = f'"{name}"' in code or bool(match and match.group(1).lower() in games.names())
        assert read, f"{name} is set by the deployment but no code reads it"
        assert f"`{name}`" in reference, f"{name} is not documented in docs/operations.md"


def _environment(overlay: str, deployment: str) -> dict[str, str]:
    """The environment a Deployment's container gets: its ConfigMap, Secret and own env."""
    docs = render(overlay)
    by_name = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    workload = by_name[("Deployment", deployment)]
    (container,) = workload["spec"]["template"]["spec"]["containers"]
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            env |= by_name[("ConfigMap", source["configMapRef"]["name"])]["data"]
        if "secretRef" in source:
            secret = next(
                d
                for d in docs
                if d["kind"] == "Secret"
                and d["metadata"]["name"].startswith(source["secretRef"]["name"])
            )
            env |= {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    env |= {e["name"]: e["value"] for e in container.get("env", [])}
    return env


def test_each_service_serves_with_the_manifest_environment(redis_url: str) -> None:
    """Start every game service and the gateway with the dev overlay's environment, pointed at
    a local Redis and at each other on free ports, and see each report SERVING."""
    processes: list[subprocess.Popen[bytes]] = []
    local_addr: dict[str, str] = {}
    try:
        for game in games.names():
            env = _environment("dev", game)
            port = free_port()
            env |= {
                "REDIS_URL": redis_url,
                "LISTEN": f"127.0.0.1:{port}",
                "METRICS_PORT": str(free_port()),
            }
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "services.game", game], env={**os.environ, **env}
                )
            )
            local_addr[f"{game.upper()}_ADDR"] = f"127.0.0.1:{port}"
        env = _environment("dev", "lobby")
        assert set(local_addr) <= set(env), "the lobby's manifest misses a game's address"
        lobby_port = free_port()
        env |= local_addr | {
            "REDIS_URL": redis_url,
            "LISTEN": f"127.0.0.1:{lobby_port}",
            "METRICS_PORT": str(free_port()),
        }
        processes.append(
            subprocess.Popen([sys.executable, "-m", "services.lobby"], env={**os.environ, **env})
        )
        local_addr["LOBBY_ADDR"] = f"127.0.0.1:{lobby_port}"
        env = _environment("dev", "gateway")
        assert set(local_addr) <= set(env), "the gateway's manifest misses an address"
        gateway_port = free_port()
        env |= local_addr | {
            "LISTEN": f"127.0.0.1:{gateway_port}",
            "METRICS_PORT": str(free_port()),
        }
        processes.append(
            subprocess.Popen([sys.executable, "-m", "gateway"], env={**os.environ, **env})
        )
        for game, addr in local_addr.items():
            assert wait_serving(addr), f"{game} did not report SERVING"
        names = [api.full_name for api in game_apis().values()]
        assert wait_serving(f"127.0.0.1:{gateway_port}", [*names, LOBBY_SERVICE])
        env = _environment("dev", "bots")
        bots_port = free_port()
        env |= {
            "REDIS_URL": redis_url,
            "GATEWAY_ADDR": f"127.0.0.1:{gateway_port}",
            "LISTEN": f"127.0.0.1:{bots_port}",
            "METRICS_PORT": str(free_port()),
        }
        processes.append(
            subprocess.Popen([sys.executable, "-m", "services.bots"], env={**os.environ, **env})
        )
        assert wait_serving(f"127.0.0.1:{bots_port}"), "the bot worker did not report SERVING"
        env = _environment("dev", "matchmaker")
        matchmaker_port = free_port()
        env |= local_addr | {
            "REDIS_URL": redis_url,
            "LISTEN": f"127.0.0.1:{matchmaker_port}",
            "METRICS_PORT": str(free_port()),
        }
        processes.append(
            subprocess.Popen(
                [sys.executable, "-m", "services.matchmaker"], env={**os.environ, **env}
            )
        )
        assert wait_serving(f"127.0.0.1:{matchmaker_port}"), "the matchmaker did not report SERVING"
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            assert process.wait(timeout=30) == 0


def test_dockerfile_builds_from_what_the_repository_has() -> None:
    """No Docker engine here: check the Dockerfile's shape instead. Two stages, the project's
    own proto target in the first, a non-root user in the slim runtime stage, and a command
    that names a real process."""
    text = (DEPLOY / "Dockerfile").read_text()
    stages = re.findall(r"^FROM (\S+)", text, re.M)
    assert len(stages) == 2
    assert all(stage.endswith("-slim") or " AS " in stage for stage in stages)
    assert "make proto" in text
    assert re.search(r"^USER 10001", text, re.M)
    entry = json.loads(re.search(r"^ENTRYPOINT (.+)$", text, re.M).group(1))  # type: ignore[union-attr]
    command = json.loads(re.search(r"^CMD (.+)$", text, re.M).group(1))  # type: ignore[union-attr]
    assert entry == ["python", "-m"]
    assert importlib.util.find_spec(f"{command[0]}.__main__") is not None
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", "gen", ".git"} <= set(ignored)
