"""The deployment files, checked without a Docker engine or a cluster: every manifest validates
against the Kubernetes schemas, each overlay renders, the Compose file validates, every command
and environment variable they name exists in the code (and is documented), every service
starts with the environment the manifests give it and reports SERVING, Redis starts the way the
manifests start it, PostgreSQL starts the way the Compose file starts it, and the NetworkPolicies
allow exactly the connections the platform makes."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import jsonschema
import kubernetes_validate
import psycopg
import pytest
import redis
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc

import games
from client import cli
from runtime import db, keys
from runtime.config import ServiceSettings
from runtime.launch import wait_serving
from runtime.localpg import _server_user, program
from runtime.localredis import LocalRedis, free_port
from runtime.redis import connect_redis, sentinels_from_env
from tests.leftovers import RUN_MARK, spawned
from tests.manifests import (
    DEPLOY,
    ROOT,
    Host,
    ProdRedis,
    compose,
    container,
    containers,
    find,
    quantity_mib,
    render,
    render_with,
    wait_answering,
    workloads,
)
from tests.timing import patience
from wire.api import LOBBY_SERVICE, game_apis

OVERLAYS = ["dev", "prod"]
KUBERNETES_VERSION = "1.32.0"
COMPOSE_SCHEMA = ROOT / ".tools" / "compose_spec.json"
SOURCES = [
    path
    for package in ("services", "gateway", "runtime", "wire")
    for path in ROOT.glob(f"{package}/**/*.py")
]


def compose_seconds(duration: str) -> float:
    """A Compose duration (`20s`, `1m30s`) in seconds."""
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", duration)
    assert "".join(n + u for n, u in parts) == duration, duration
    scale = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * scale[u] for n, u in parts)


REDIS_CONTAINERS = {"redis", "sentinel"}
"""The containers of Redis itself (nodes, Sentinels): their commands and variables are
redis-server's, checked by the Redis tests below."""
STORES = {*REDIS_CONTAINERS, "postgres"}
"""The containers (and Compose services) of the data stores themselves: their commands and
variables are the servers' own, checked by the Redis and PostgreSQL tests below."""
STORE_SECRET = re.compile(r"tabletop-postgres(-[a-z0-9]{10})?")
"""The dev overlay's Secret of PostgreSQL's own password, which only PostgreSQL reads (its
clients, DATABASE_CLIENTS, get it inside DATABASE_URL, from tabletop-database)."""
DATABASE_SECRET = re.compile(r"tabletop-database(-[a-z0-9]{10})?")
"""The Secret of DATABASE_URL (the dev overlay generates it; prod's operator creates it)."""
MIGRATE = ("client.cli", "migrate")
"""`python -m client.cli migrate` (`tabletop migrate`): the one command that is not a process's
module of its own."""
REDIS_USERS = ["lobby", "matchmaker", "bots", "ratings", *games.names()]
"""The processes that use Redis (the gateway does not)."""
PROCESSES = ["gateway", "lobby", "matchmaker", "bots", "ratings", "accounts", *games.names()]
WITH_ACCOUNTS = {"ratings", "accounts"}
"""The processes the component accounts-database runs (they need PostgreSQL): the dev overlay
has them, prod only with the component."""
DATABASE_CLIENTS = ("accounts", "lobby", "migrate", "ratings")
"""The pods that get DATABASE_URL and reach PostgreSQL, with the component accounts-database
(without it, none): the accounts service, the lobby (the archive it reads), the migration Job
and the ratings consumers. The gateways never: they reach the accounts service."""
LIVENESS = "liveness"
"""The health service name every process answers SERVING for while it runs, whatever Redis
says (runtime/server.py LIVENESS_SERVICE): what the liveness probes ask."""


def _has_accounts(docs: list[dict[str, Any]]) -> bool:
    """Whether the rendered docs have the component accounts-database (its migration Job)."""
    return any(d["kind"] == "Job" and d["metadata"]["name"] == "tabletop-migrate" for d in docs)


def _database_readers(docs: list[dict[str, Any]]) -> set[str]:
    """The pods (by their name label: the migration Job's is `migrate`) whose containers take
    the Secret of DATABASE_URL."""
    jobs = [d for d in docs if d["kind"] == "Job"]
    return {
        pod["metadata"]["labels"]["app.kubernetes.io/name"]
        for workload in [*workloads(docs), *jobs]
        for pod in [workload["spec"]["template"]]
        for each in pod["spec"]["containers"]
        for source in each.get("envFrom", [])
        if DATABASE_SECRET.fullmatch(source.get("secretRef", {}).get("name", ""))
    }


def _running(names: list[str], accounts: bool) -> list[str]:
    """Those of `names` an overlay runs: every one, but those of WITH_ACCOUNTS only with the
    component accounts-database (`accounts`)."""
    return [name for name in names if accounts or name not in WITH_ACCOUNTS]


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
    for kind in ("Deployment", "PodDisruptionBudget"):
        # The ratings consumers and the accounts service come with the accounts' database: dev
        # has it, prod does not.
        assert ((kind, "ratings") in kinds) == (overlay == "dev") == _has_accounts(docs)
        assert ((kind, "accounts") in kinds) == (overlay == "dev")
    assert (("Service", "accounts") in kinds) == (overlay == "dev")
    # DATABASE_URL too: prod without the component has no database, and no pod asks for one.
    assert _database_readers(docs) == (set(DATABASE_CLIENTS) if overlay == "dev" else set())
    assert ("StatefulSet", "redis") in kinds
    assert find(docs, "ConfigMap", "tabletop-config")
    assert ("NetworkPolicy", "default-deny") in kinds


def test_prod_scales_bot_workers_on_their_stream_lag() -> None:
    docs = render("prod")
    (scaled,) = [d for d in docs if d["kind"] == "ScaledObject"]
    assert scaled["apiVersion"] == "keda.sh/v1alpha1"
    assert scaled["spec"]["scaleTargetRef"]["name"] == "bots"
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "redis-sentinel-streams", "KEDA follows the primary too"
    assert trigger["metadata"]["stream"] == keys.BOT_TURNS
    assert trigger["metadata"]["consumerGroup"] == keys.BOT_GROUP
    assert int(trigger["metadata"]["lagCount"]) > 0
    bots = find(docs, "Deployment", "bots")
    assert "replicas" not in bots["spec"], "KEDA owns the bot workers' replica count"


def test_keda_reaches_redis_from_its_own_namespace_with_the_password() -> None:
    """KEDA's operator follows the primary through the Sentinels, as the processes do: the
    Sentinels of REDIS_SENTINELS, by names fully qualified (it resolves them in its own
    namespace), the same master name. It logs in to the nodes and to the Sentinels with the
    Redis password from the Secret (a TriggerAuthentication), activates on the lag, and falls
    back to a fixed count of workers when it cannot read the lag."""
    docs = render("prod")
    (scaled,) = [d for d in docs if d["kind"] == "ScaledObject"]
    (trigger,) = scaled["spec"]["triggers"]
    namespace = scaled["metadata"]["namespace"]
    config = find(docs, "ConfigMap", "tabletop-config")["data"]
    addresses = []
    for item in config["REDIS_SENTINELS"].split(","):
        host, port = item.rsplit(":", 1)
        addresses.append(f"{host}.{namespace}.svc.cluster.local:{port}")
    assert trigger["metadata"]["addresses"] == ",".join(addresses)
    assert trigger["metadata"]["sentinelMaster"] == config["REDIS_SENTINEL_MASTER"]
    assert "address" not in trigger["metadata"]
    assert int(trigger["metadata"]["activationLagCount"]) >= 0
    auth = find(docs, "TriggerAuthentication", trigger["authenticationRef"]["name"])
    assert auth["metadata"]["namespace"] == namespace
    assert auth["spec"]["secretTargetRef"] == [
        {"parameter": parameter, "name": "tabletop-redis", "key": "REDIS_PASSWORD"}
        for parameter in ("password", "sentinelPassword")
    ]
    fallback = scaled["spec"]["fallback"]
    assert fallback["failureThreshold"] > 0
    assert scaled["spec"]["minReplicaCount"] <= fallback["replicas"]
    assert fallback["replicas"] <= scaled["spec"]["maxReplicaCount"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_workloads_are_locked_down_and_probed(overlay: str) -> None:
    docs = render(overlay)
    for workload in workloads(docs):
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        for each in pod["containers"]:
            security = each["securityContext"]
            assert security["readOnlyRootFilesystem"] is True
            assert security["allowPrivilegeEscalation"] is False
            assert security["capabilities"]["drop"] == ["ALL"]
            assert each["resources"]["requests"]
            assert each["resources"]["limits"]
            assert each["readinessProbe"]
            assert each["livenessProbe"]
            if workload["kind"] == "Deployment":
                assert "grpc" in each["readinessProbe"]
                assert "grpc" in each["livenessProbe"]
        assert pod["automountServiceAccountToken"] is False, "no process talks to the API server"
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
        if name not in STORES
    }
    for overlay in OVERLAYS:
        commands |= {
            tuple(c["args"]) for c in containers(render(overlay)) if c["name"] not in STORES
        }
    return commands


def test_every_command_exists() -> None:
    commands = _commands()
    assert {
        ("gateway",),
        ("services.bots",),
        ("services.matchmaker",),
        ("services.lobby",),
        ("services.ratings",),
        ("services.accounts",),
        *(("services.game", g) for g in games.names()),
    } <= commands
    for module, *args in commands:
        if (module, *args[:1]) == MIGRATE:
            # The CLI parses its options (a bad one: SystemExit), then wants a database.
            assert cli.main([*args, "--database", ""]) == 2, args
            continue
        assert importlib.util.find_spec(f"{module}.__main__") is not None, module
        assert all(arg in games.names() for arg in args), args


def _variables() -> set[str]:
    names: set[str] = set()
    for name, service in compose()["services"].items():
        if name not in STORES:
            names |= set(service.get("environment", {}))
    for overlay in OVERLAYS:
        docs = render(overlay)
        for doc in docs:
            store = STORE_SECRET.fullmatch(doc["metadata"]["name"])
            if doc["kind"] in ("ConfigMap", "Secret") and not store:
                names |= set(doc.get("data", {}))
        for each in containers(docs):
            if each["name"] not in STORES:  # redis-server's and PostgreSQL's own (see below)
                names |= {e["name"] for e in each.get("env", [])}
    return names


def test_every_variable_is_read_by_the_code_and_documented() -> None:
    code = "\n".join(path.read_text() for path in SOURCES)
    reference = (ROOT / "docs" / "operations.md").read_text()
    for name in _variables():
        match = re.fullmatch(r"([A-Z]+)_ADDR", name)
        read = f'"{name}"' in code or bool(match and match.group(1).lower() in games.names())
        assert read, f"{name} is set by the deployment but no code reads it"
        assert f"`{name}`" in reference, f"{name} is not documented in docs/operations.md"


def test_every_variable_the_code_reads_is_documented() -> None:
    """The other way round: a setting the processes read is in the configuration reference
    (the standard XDG_STATE_HOME aside, which TABLETOP_STATE_DIR's row names)."""
    code = "\n".join(path.read_text() for path in SOURCES)
    read = set(re.findall(r'env_(?:str|int|float|bool)\("([A-Z_]+)"', code))
    read |= set(re.findall(r'os\.environ(?:\.get\(|\[)"([A-Z_]+)"', code))
    reference = (ROOT / "docs" / "operations.md").read_text()
    missing = sorted(name for name in read - {"XDG_STATE_HOME"} if f"`{name}`" not in reference)
    assert not missing, f"read by the code, not in docs/operations.md: {missing}"
    assert {"GRACE_SECONDS", "STOP_MARGIN_SECONDS", "REDIS_SOCKET_TIMEOUT_SECONDS"} <= read


def _environment(
    overlay: str, deployment: str, secrets: dict[str, dict[str, str]] | None = None
) -> dict[str, str]:
    """The environment a Deployment's container gets: its ConfigMap, Secrets and own env. A
    Secret the overlay does not make (prod: the operator creates them) comes from `secrets`."""
    docs = render(overlay)
    by_name = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    workload = by_name[("Deployment", deployment)]
    (container,) = workload["spec"]["template"]["spec"]["containers"]
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            env |= by_name[("ConfigMap", source["configMapRef"]["name"])]["data"]
        if "secretRef" in source:
            name = source["secretRef"]["name"]
            if ("Secret", name) in by_name:
                data = by_name[("Secret", name)]["data"]
                env |= {k: base64.b64decode(v).decode() for k, v in data.items()}
            else:
                assert name in (secrets or {}), f"no Secret {name}"
                env |= (secrets or {})[name]
    env |= {e["name"]: e["value"] for e in container.get("env", [])}
    return env


def test_each_service_serves_with_the_manifest_environment(database_url: str) -> None:
    """Start every process with the dev overlay's environment, pointed at a local Redis that
    wants the overlay's Redis password, at each other on free ports and (the accounts service,
    the lobby, the ratings consumer) at a local PostgreSQL, and see each report SERVING,
    overall (what the readiness probes ask) and for "liveness" (what the liveness probes
    ask)."""
    password = _environment("dev", "lobby")["REDIS_PASSWORD"]
    server = LocalRedis(appendonly=False, password=password)
    redis_url = server.url
    assert "REDIS_PASSWORD" not in _environment("dev", "gateway"), "the gateway has no Redis"
    processes: list[subprocess.Popen[bytes]] = []
    local_addr: dict[str, str] = {}

    def start(module: str, *args: str) -> None:
        command = [sys.executable, "-m", module, *args]
        processes.append(running.enter_context(spawned(command, env={**os.environ, **env})))

    with contextlib.ExitStack() as running:  # every process is stopped, whatever happens
        running.callback(server.stop)
        for game in games.names():
            env = _environment("dev", game)
            assert env["REDIS_PASSWORD"] == password
            port = free_port()
            env |= {
                "REDIS_URL": redis_url,
                "LISTEN": f"127.0.0.1:{port}",
                "METRICS_PORT": str(free_port()),
            }
            start("services.game", game)
            local_addr[f"{game.upper()}_ADDR"] = f"127.0.0.1:{port}"
        env = _environment("dev", "accounts")
        assert env["DATABASE_URL"].startswith("postgresql://")
        assert "REDIS_PASSWORD" not in env, "the accounts service has no Redis"
        accounts_port = free_port()
        env |= {
            "DATABASE_URL": database_url,
            "LISTEN": f"127.0.0.1:{accounts_port}",
            "METRICS_PORT": str(free_port()),
        }
        start("services.accounts")
        local_addr["ACCOUNTS_ADDR"] = f"127.0.0.1:{accounts_port}"
        env = _environment("dev", "lobby")
        assert set(local_addr) <= set(env), "the lobby's manifest misses an address"
        assert env["DATABASE_URL"] == _environment("dev", "accounts")["DATABASE_URL"]
        lobby_port = free_port()
        env |= local_addr | {
            "REDIS_URL": redis_url,
            "DATABASE_URL": database_url,
            "LISTEN": f"127.0.0.1:{lobby_port}",
            "METRICS_PORT": str(free_port()),
        }
        start("services.lobby")
        local_addr["LOBBY_ADDR"] = f"127.0.0.1:{lobby_port}"
        env = _environment("dev", "gateway")
        assert set(local_addr) <= set(env), "the gateway's manifest misses an address"
        assert "DATABASE_URL" not in env, "the gateway holds no database address"
        gateway_port = free_port()
        env |= local_addr | {
            "LISTEN": f"127.0.0.1:{gateway_port}",
            "METRICS_PORT": str(free_port()),
        }
        start("gateway")
        for game, addr in local_addr.items():
            assert wait_serving(addr, [LIVENESS], patience(30)), f"{game} did not report SERVING"
        names = [api.full_name for api in game_apis().values()]
        assert wait_serving(
            f"127.0.0.1:{gateway_port}", [*names, LOBBY_SERVICE, LIVENESS], patience(30)
        )
        env = _environment("dev", "bots")
        assert env["REDIS_PASSWORD"] == password
        bots_port = free_port()
        env |= {
            "REDIS_URL": redis_url,
            "GATEWAY_ADDR": f"127.0.0.1:{gateway_port}",
            "LISTEN": f"127.0.0.1:{bots_port}",
            "METRICS_PORT": str(free_port()),
        }
        start("services.bots")
        assert wait_serving(f"127.0.0.1:{bots_port}", [LIVENESS], patience(30)), "bots not SERVING"
        env = _environment("dev", "matchmaker")
        assert env["REDIS_PASSWORD"] == password
        matchmaker_port = free_port()
        env |= local_addr | {
            "REDIS_URL": redis_url,
            "LISTEN": f"127.0.0.1:{matchmaker_port}",
            "METRICS_PORT": str(free_port()),
        }
        start("services.matchmaker")
        assert wait_serving(f"127.0.0.1:{matchmaker_port}", [LIVENESS], patience(30)), "matchmaker"
        env = _environment("dev", "ratings")
        assert env["REDIS_PASSWORD"] == password
        assert env["DATABASE_URL"] == _environment("dev", "accounts")["DATABASE_URL"]
        assert "ACCOUNTS_ADDR" in env, "the ratings consumer's manifest misses an address"
        ratings_port = free_port()
        env |= {
            "ACCOUNTS_ADDR": local_addr["ACCOUNTS_ADDR"],
            "REDIS_URL": redis_url,
            "DATABASE_URL": database_url,
            "LISTEN": f"127.0.0.1:{ratings_port}",
            "METRICS_PORT": str(free_port()),
        }
        start("services.ratings")
        assert wait_serving(f"127.0.0.1:{ratings_port}", [LIVENESS], patience(30)), "ratings"
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            assert process.wait(timeout=patience(30)) == 0, process.args


# --- Redis: a password from a Secret, a memory bound, no eviction -------------------------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_redis_password_comes_from_a_secret(overlay: str) -> None:
    """Every Redis user takes REDIS_PASSWORD from the Secret tabletop-redis (envFrom), the
    gateway does not get it, no ConfigMap holds it, and Redis itself takes it from the same
    Secret without it appearing in its command. The dev overlay generates the Secret; prod
    makes none (its kustomization says how to create it)."""
    docs = render(overlay)
    for doc in docs:
        if doc["kind"] == "ConfigMap":
            assert not {"REDIS_PASSWORD", "REDIS_USERNAME"} & set(doc["data"]), doc["metadata"]
    secret_name = "tabletop-redis"
    if overlay == "dev":
        secret = find(docs, "Secret", "tabletop-redis")
        secret_name = secret["metadata"]["name"]
        password = base64.b64decode(secret["data"]["REDIS_PASSWORD"]).decode()
        assert len(password) >= 16
    else:
        assert [d for d in docs if d["kind"] == "Secret"] == [], "prod: the operator makes them"
        text = (DEPLOY / "k8s" / "overlays" / "prod" / "kustomization.yaml").read_text()
        assert "create secret generic tabletop-redis" in text
    for name in _running(PROCESSES, _has_accounts(docs)):
        refs = [
            s["secretRef"]["name"] for s in container(docs, name)["envFrom"] if "secretRef" in s
        ]
        assert (secret_name in refs) == (name in REDIS_USERS), name
    redis_containers = [c for c in containers(docs) if c["name"] in REDIS_CONTAINERS]
    assert [c["name"] for c in redis_containers] == (
        ["redis", "sentinel"] if overlay == "prod" else ["redis"]
    )
    for redis_container in redis_containers:
        env = {e["name"]: e for e in redis_container["env"]}
        for name in ("REDIS_PASSWORD", "REDISCLI_AUTH"):
            assert env[name]["valueFrom"]["secretKeyRef"] == {
                "name": secret_name,
                "key": "REDIS_PASSWORD",
            }
        password_vars = {
            name
            for name, e in env.items()
            if "secretKeyRef" in e.get("valueFrom", {}) or "PASS" in name or "AUTH" in name
        }
        assert password_vars == {"REDIS_PASSWORD", "REDISCLI_AUTH"}, password_vars
        command = " ".join(redis_container["command"] + redis_container.get("args", []))
        for flag in ("--requirepass", "--masterauth", "-a ", "--pass", "--user"):
            assert flag not in command, f"{redis_container['name']}: {flag} on a command line"
        if redis_container["name"] == "redis":
            assert "redis-server -" in command, "the configuration (the password) comes on stdin"
        else:
            # Sentinel wants a file it can rewrite: one in memory, of this pod alone.
            (mount,) = redis_container["volumeMounts"]
            pod = next(
                w["spec"]["template"]["spec"]
                for w in workloads(docs)
                if redis_container in w["spec"]["template"]["spec"]["containers"]
            )
            (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
            assert volume["emptyDir"]["medium"] == "Memory"
            assert f"> {mount['mountPath']}/sentinel.conf" in command
            assert "umask 0077" in command


def test_compose_gives_every_redis_user_the_password() -> None:
    services = compose()["services"]
    required = re.compile(r"\$\{REDIS_PASSWORD:\?[^}]+\}")
    users = {
        name for name, service in services.items() if "REDIS_URL" in service.get("environment", {})
    }
    assert users == {"lobby", "matchmaker", "bots", "ratings", *games.names()}
    for name in users:
        assert required.fullmatch(services[name]["environment"]["REDIS_PASSWORD"]), name
    assert "REDIS_PASSWORD" not in services["gateway"]["environment"]
    redis_env = services["redis"]["environment"]
    assert required.fullmatch(redis_env["REDIS_PASSWORD"])
    assert required.fullmatch(redis_env["REDISCLI_AUTH"])
    assert "redis-cli ping" in " ".join(services["redis"]["healthcheck"]["test"])


def _redis_launch(kind: str) -> tuple[list[str], dict[str, str], int, list[str]]:
    """How a manifest starts Redis: the command, the environment the manifest derives from
    the container (not the password), the memory limit in MiB, and the readiness check."""
    if kind == "kubernetes":
        redis_container = container(render("dev"), "redis")
        args = list(redis_container["args"])
        limit = quantity_mib(redis_container["resources"]["limits"]["memory"])
        env = {e["name"]: e["valueFrom"] for e in redis_container["env"]}
        field = env["MEMORY_LIMIT_MB"]["resourceFieldRef"]
        assert (field["resource"], field["divisor"]) == ("limits.memory", "1Mi")
        return (
            redis_container["command"] + args,
            {"MEMORY_LIMIT_MB": str(limit)},
            limit,
            redis_container["readinessProbe"]["exec"]["command"],
        )
    service = compose()["services"]["redis"]
    # Compose reads `$$` as a literal `$`.
    command = [part.replace("$$", "$") for part in service["entrypoint"] + service["command"]]
    limit = int(re.fullmatch(r"(\d+)g", service["mem_limit"]).group(1)) * 1024  # type: ignore[union-attr]
    test = service["healthcheck"]["test"]
    assert test[0] == "CMD-SHELL"
    return command, {}, limit, ["sh", "-c", test[1]]


@pytest.mark.parametrize("kind", ["kubernetes", "compose"])
def test_redis_starts_the_way_the_manifests_start_it(kind: str, tmp_path: Path) -> None:
    """Run the manifest's own Redis command with the local redis-server (the image's shell is
    busybox, here it is the machine's sh): it becomes redis-server itself (so the stop signal
    reaches it), wants the password, which is on no command line, bounds its memory below the
    container's limit with noeviction, keeps the append-only log, and the readiness check
    passes only with the password. Without a password it refuses to start."""
    command, env, limit_mib, probe = _redis_launch(kind)
    port = free_port()
    if "--dir" in command:
        command[command.index("--dir") + 1] = str(tmp_path)
    command += ["--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    password = "Zm9v+YmFy/YmF6-" + os.urandom(8).hex()
    base_env = {"PATH": os.environ["PATH"], RUN_MARK: os.environ[RUN_MARK], **env}
    process = subprocess.Popen(command, env={**base_env, "REDIS_PASSWORD": password}, cwd=tmp_path)
    try:
        client = redis.Redis(port=port, password=password)
        wait_answering(client, process, "redis-server")
        proc = Path(f"/proc/{process.pid}")
        assert proc.joinpath("comm").read_text().strip() == "redis-server"
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            with contextlib.suppress(OSError):  # a process that ended meanwhile
                assert password.encode() not in cmdline.read_bytes(), cmdline
        with redis.Redis(port=port) as anonymous, pytest.raises(redis.AuthenticationError):
            anonymous.ping()
        maxmemory = int(str(client.config_get("maxmemory")["maxmemory"]))
        assert 0 < maxmemory <= limit_mib * 1024 * 1024 * 0.8
        assert client.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"
        assert client.config_get("appendonly")["appendonly"] == "yes"
        client.close()
        # The readiness check, pointed at this port.
        check = [part.replace("redis-cli", f"redis-cli -p {port}") for part in probe]
        ok = subprocess.run(check, env={**base_env, "REDISCLI_AUTH": password}, check=False)
        assert ok.returncode == 0
        assert subprocess.run(check, env=base_env, check=False).returncode != 0
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=patience(10)) == 0, "redis-server did not shut down cleanly"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    empty = subprocess.run(
        command, env={**base_env, "REDIS_PASSWORD": ""}, cwd=tmp_path, capture_output=True,
        timeout=patience(10), check=False,
    )  # fmt: skip
    assert empty.returncode != 0, "Redis started without a password"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_redis_bounds_its_memory_and_never_evicts(overlay: str) -> None:
    redis_container = container(render(overlay), "redis", "redis")
    args = redis_container["args"]
    assert args[args.index("--maxmemory-policy") + 1] == "noeviction"
    script = redis_container["command"][-2]
    assert re.search(r'--maxmemory "\$\(\(MEMORY_LIMIT_MB \* 3 / 4\)\)mb"', script)
    service = compose()["services"]["redis"]
    command = service["command"]
    assert command[command.index("--maxmemory-policy") + 1] == "noeviction"
    maxmemory = int(command[command.index("--maxmemory") + 1].removesuffix("mb"))
    limit = int(service["mem_limit"].removesuffix("g")) * 1024
    assert 0 < maxmemory <= limit * 0.8


# --- PostgreSQL in Compose: the accounts, migrated before they are served ---------------------

PG_PASSWORD = re.compile(r"\$\{POSTGRES_PASSWORD:\?[^}]+\}")
"""POSTGRES_PASSWORD, required: Compose refuses to start without it."""


def test_compose_gives_the_accounts_service_a_migrated_database() -> None:
    """PostgreSQL wants POSTGRES_PASSWORD (psql and the healthcheck log in with PGPASSWORD),
    keeps its cluster on a named volume and runs as `postgres`; the one-shot migrate service
    (the platform's image) runs `tabletop migrate` once PostgreSQL is healthy (and waits for it
    by itself). Only the accounts service, the lobby (the archive it reads), the ratings
    consumer and migrate get DATABASE_URL, with the same password; the gateway reaches the
    accounts service (ACCOUNTS_ADDR) and waits for it to be healthy; the lobby and the ratings
    consumer reach it too (the consumer proving its calls with INTERNAL_KEY). No
    service depends on a one-shot service: podman would not restart it after a crash (it does
    not start a container while one it requires has exited)."""
    services = compose()["services"]
    url = re.compile(rf"postgresql://tabletop:{PG_PASSWORD.pattern}@postgres:5432/tabletop")
    users = {
        name
        for name, service in services.items()
        if "DATABASE_URL" in service.get("environment", {})
    }
    assert users == {"accounts", "lobby", "ratings", "migrate"}
    gateway_env = services["gateway"]["environment"]
    assert gateway_env["ACCOUNTS_ADDR"] == "dns:///accounts:50056"
    assert services["lobby"]["environment"]["ACCOUNTS_ADDR"] == "dns:///accounts:50056"
    ratings_env = services["ratings"]["environment"]
    assert ratings_env["ACCOUNTS_ADDR"] == "dns:///accounts:50056"
    assert ratings_env["INTERNAL_KEY"] == services["lobby"]["environment"]["INTERNAL_KEY"]
    assert services["accounts"]["environment"]["LISTEN"] == "0.0.0.0:50056"
    assert services["gateway"]["depends_on"]["accounts"] == {"condition": "service_healthy"}
    assert services["accounts"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    for name in users:
        assert url.fullmatch(services[name]["environment"]["DATABASE_URL"]), name
    for name, service in services.items():
        if name != "postgres":
            assert "POSTGRES_PASSWORD" not in service.get("environment", {}), name
    migrate, gateway, postgres = services["migrate"], services["gateway"], services["postgres"]
    assert tuple(migrate["command"][:2]) == MIGRATE
    assert migrate["image"] == gateway["image"]  # the same release's migrations
    assert migrate["restart"] == "no"
    assert migrate["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert cli.main([*migrate["command"][1:], "--database", ""]) == 2  # options the CLI takes
    assert "--wait" in migrate["command"]
    one_shot = {name for name, service in services.items() if service.get("restart") == "no"}
    assert one_shot == {"migrate"}
    for name, service in services.items():
        assert not one_shot & set(service.get("depends_on", {})), name
    env = postgres["environment"]
    assert PG_PASSWORD.fullmatch(env["POSTGRES_PASSWORD"])
    assert PG_PASSWORD.fullmatch(env["PGPASSWORD"])
    assert postgres["user"] == "postgres"
    (volume,) = postgres["volumes"]
    name, path = volume.split(":")
    assert name in compose()["volumes"]
    assert env["PGDATA"].startswith(path + "/")
    assert postgres["healthcheck"]["test"][:2] == ["CMD", "pg_isready"]


@dataclass
class PostgresLaunch:
    """How a manifest starts PostgreSQL: the command, the environment it sets besides the
    password (which `start` gives), where the data volume is mounted, the readiness check, and
    how it is stopped (a signal, or a preStop command and then SIGTERM)."""

    command: list[str]
    env: dict[str, str]
    mount: str
    probe: list[str]
    stop_signal: signal.Signals
    pre_stop: list[str]

    def environment(self, volume: Path, port: int, password: str) -> dict[str, str]:
        """The manifest's environment with the password, the volume at `volume`, and the
        machine's PostgreSQL on the PATH, listening (and called) on `port`."""
        return self.env | {
            "PGDATA": self.env["PGDATA"].replace(self.mount, str(volume)),
            "PGPORT": str(port),  # the server's port, and the one psql and pg_isready call
            "PATH": f"{Path(program('postgres')).parent}:{os.environ['PATH']}",
            RUN_MARK: os.environ[RUN_MARK],
            "POSTGRES_PASSWORD": password,
            "PGPASSWORD": password,
        }

    def start(
        self, volume: Path, port: int, password: str, user: dict[str, Any]
    ) -> subprocess.Popen[bytes]:
        """The manifest's command, on 127.0.0.1 only (the last listen_addresses wins)."""
        command = [*self.command, "-c", "listen_addresses=127.0.0.1"]
        env = self.environment(volume, port, password)
        return subprocess.Popen(command, env=env, cwd=volume, **user)

    def healthy(self, volume: Path, port: int, password: str) -> bool:
        env = self.environment(volume, port, password)
        done = subprocess.run(self.probe, env=env, timeout=patience(10), check=False)
        return done.returncode == 0


def _postgres_launch(kind: str) -> PostgresLaunch:
    if kind == "kubernetes":
        docs = render("dev")
        pod = find(docs, "StatefulSet", "postgres")["spec"]["template"]["spec"]
        (each,) = pod["containers"]
        (mount,) = [m["mountPath"] for m in each["volumeMounts"]]
        secret = find(docs, "Secret", "tabletop-postgres")["metadata"]["name"]
        env = {}
        for e in each["env"]:
            if "valueFrom" in e:  # the password: from the Secret, and given by the test
                assert e["valueFrom"]["secretKeyRef"] == {
                    "name": secret,
                    "key": "POSTGRES_PASSWORD",
                }
            else:
                env[e["name"]] = e["value"]
        return PostgresLaunch(
            command=each["command"] + each["args"],
            env=env,
            mount=mount,
            probe=each["readinessProbe"]["exec"]["command"],
            stop_signal=signal.SIGTERM,
            pre_stop=each["lifecycle"]["preStop"]["exec"]["command"],
        )
    service = compose()["services"]["postgres"]
    (mount,) = [v.split(":")[1] for v in service["volumes"]]
    test = service["healthcheck"]["test"]
    assert test[0] == "CMD"
    return PostgresLaunch(
        # Compose reads `$$` as a literal `$`.
        command=[part.replace("$$", "$") for part in service["entrypoint"] + service["command"]],
        env={k: v for k, v in service["environment"].items() if not PG_PASSWORD.fullmatch(v)},
        mount=mount,
        probe=test[1:],
        stop_signal=signal.Signals[service["stop_signal"]],
        pre_stop=[],
    )


def _postgres_volume(user: dict[str, Any]) -> Path:
    """An empty directory the server's user owns (as a new volume would be)."""
    volume = Path(tempfile.mkdtemp(prefix="tabletop-manifest-pg-"))
    if user:
        os.chown(volume, user["user"], user["group"])
    return volume


@pytest.mark.parametrize("kind", ["compose", "kubernetes"])
def test_postgres_starts_the_way_the_manifests_start_it(kind: str) -> None:
    """Run the manifest's own PostgreSQL command (the Compose file's, the dev overlay's) with
    the machine's PostgreSQL, as the user `postgres` (when we are root; the container's user):
    on an empty volume it makes the cluster and becomes postgres itself (the stop signal
    reaches it); the readiness check passes; the database `tabletop` takes the user `tabletop`
    with POSTGRES_PASSWORD only (and the password is on no command line); `tabletop migrate`
    brings its schema; the manifest's way of stopping it (Compose: its stop signal; Kubernetes:
    the preStop command, then SIGTERM) ends it cleanly, whoever is still connected; started
    again on the same volume it has kept it all. Without a password it refuses to start and
    makes nothing."""
    launch = _postgres_launch(kind)
    user = _server_user()
    volume = _postgres_volume(user)
    port = free_port()
    password = os.urandom(16).hex()
    url = f"postgresql://tabletop:{password}@127.0.0.1:{port}/tabletop"
    try:
        for start in ("first", "again"):
            process = launch.start(volume, port, password, user)
            try:
                deadline = time.monotonic() + patience(30)
                while not launch.healthy(volume, port, password):
                    assert process.poll() is None, f"postgres exited ({start} start)"
                    assert time.monotonic() < deadline, f"not ready ({start} start)"
                    time.sleep(0.2)
                proc = Path(f"/proc/{process.pid}")
                assert proc.joinpath("comm").read_text().strip() == "postgres"
                for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
                    with contextlib.suppress(OSError):  # a process that ended meanwhile
                        assert password.encode() not in cmdline.read_bytes(), cmdline
                for wrong in ("", "not-the-password"):
                    with pytest.raises(psycopg.OperationalError):
                        psycopg.connect(url.replace(password, wrong), connect_timeout=5).close()
                names = [f"{m.version:04d}_{m.name}" for m in db.migrations()]
                assert db.migrate(url) == (names if start == "first" else [])
                assert [p.name for p in volume.iterdir()] == ["pgdata"]  # nothing half made
                # A client still connected (the gateway's pool) does not hold the stop up.
                with psycopg.connect(url, connect_timeout=5):
                    if launch.pre_stop:
                        env = launch.environment(volume, port, password)
                        subprocess.run(
                            launch.pre_stop, env=env, timeout=patience(10), check=True, **user
                        )
                    process.send_signal(launch.stop_signal)
                    assert process.wait(timeout=patience(10)) == 0, "postgres did not stop cleanly"
                assert not launch.healthy(volume, port, password)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
        empty = _postgres_volume(user)
        try:
            refused = launch.start(empty, port, "", user)
            assert refused.wait(timeout=patience(10)) != 0, "PostgreSQL started without a password"
            assert list(empty.iterdir()) == []
        finally:
            shutil.rmtree(empty)
    finally:
        shutil.rmtree(volume)


# --- Redis in prod: a primary, two replicas, three Sentinels; everyone follows the primary ------


def _env_values(redis_container: dict[str, Any]) -> dict[str, Any]:
    """A container's env: each name to its value, or to its valueFrom."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in redis_container["env"]}


def _sentinel_setting(script: str, name: str) -> str:
    """A per-master line of the Sentinel start script's configuration: its value."""
    found = re.search(rf"^sentinel {name} \$REDIS_SENTINEL_MASTER (.+)$", script, re.M)
    assert found, name
    return found.group(1)


def test_prod_runs_redis_replicated_under_three_sentinels() -> None:
    """prod: the base's single Redis is gone; in its place 3 Redis pods, one per Kubernetes
    node (losing a node loses one), each with its node and a Sentinel beside it (a partition
    never separates a node from its Sentinel: the Sentinels' majority is the data's), a
    quorum of 2, a disruption budget, names that resolve before a pod is ready (a headless
    Service that publishes not-ready addresses), nodes and Sentinels set up as the processes
    are told (REDIS_SENTINELS: each pod by its stable name and the Sentinel's port;
    REDIS_SENTINEL_MASTER: the name monitored, from the same ConfigMap), both announced by the
    pod's name, redis-0 the first primary, the volume at 50Gi, and every host a setting names a
    Service of the overlay."""
    docs = render("prod")
    config_map = find(docs, "ConfigMap", "tabletop-config")
    config = config_map["data"]
    services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
    assert "redis" not in services, "the base's single Redis is gone"
    nodes = find(docs, "StatefulSet", "redis")
    assert [w["metadata"]["name"] for w in docs if w["kind"] == "StatefulSet"] == ["redis"]
    assert nodes["spec"]["replicas"] == 3
    service = services[nodes["spec"]["serviceName"]]
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["publishNotReadyAddresses"] is True
    labels = nodes["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"] == labels == nodes["spec"]["selector"]["matchLabels"]
    affinity = nodes["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
    (term,) = affinity["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term == {
        "labelSelector": {"matchLabels": labels},
        "topologyKey": "kubernetes.io/hostname",
    }
    budget = find(docs, "PodDisruptionBudget", "redis")
    assert budget["spec"]["selector"]["matchLabels"] == labels
    (claim,) = nodes["spec"]["volumeClaimTemplates"]
    assert claim["spec"]["resources"]["requests"]["storage"] == "50Gi"

    pod = nodes["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in pod] == ["redis", "sentinel"], "a Sentinel in each Redis pod"
    node, sentinel = pod
    node_env, sentinel_env = _env_values(node), _env_values(sentinel)
    (node_port,) = node["ports"]
    (sentinel_port,) = sentinel["ports"]
    assert [(p["port"], p["targetPort"]) for p in service["spec"]["ports"]] == [
        (node_port["containerPort"], node_port["name"]),
        (sentinel_port["containerPort"], sentinel_port["name"]),
    ]
    name = service["metadata"]["name"]
    assert config["REDIS_SENTINELS"].split(",") == [
        f"redis-{i}.{name}:{sentinel_port['containerPort']}" for i in range(3)
    ]
    script = sentinel["command"][2]
    monitor = re.search(r"^sentinel monitor \$REDIS_SENTINEL_MASTER \$primary (\d+)$", script, re.M)
    assert monitor, "the Sentinels watch the primary"
    assert int(monitor.group(1)) == 2 == nodes["spec"]["replicas"] // 2 + 1, "quorum"
    assert 1000 <= int(_sentinel_setting(script, "down-after-milliseconds")) <= 10000
    assert int(_sentinel_setting(script, "failover-timeout")) >= 30000
    assert _sentinel_setting(script, "auth-pass") == "$REDIS_PASSWORD"
    for line in ("requirepass $REDIS_PASSWORD", "sentinel sentinel-pass $REDIS_PASSWORD",
                 "sentinel resolve-hostnames yes", "sentinel announce-hostnames yes",
                 "sentinel announce-ip $SENTINEL_ANNOUNCE"):  # fmt: skip
        assert re.search(rf"^{re.escape(line)}$", script, re.M), line
    for env in (node_env, sentinel_env):
        for key in ("REDIS_SENTINELS", "REDIS_SENTINEL_MASTER"):
            assert env[key] == {
                "configMapKeyRef": {"name": config_map["metadata"]["name"], "key": key}
            }
        assert env["POD_NAME"] == {"fieldRef": {"fieldPath": "metadata.name"}}
        assert env["POD_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
        assert env["REDIS_PORT"] == str(node_port["containerPort"])
        assert env["REDIS_FIRST_NODE"] == f"redis-0.{name}.$(POD_NAMESPACE).svc.cluster.local"
    pod_name = f"$(POD_NAME).{name}.$(POD_NAMESPACE).svc.cluster.local"
    assert node_env["REDIS_ANNOUNCE"] == sentinel_env["SENTINEL_ANNOUNCE"] == pod_name
    assert sentinel_env["SENTINEL_PORT"] == str(sentinel_port["containerPort"])
    node_script = node["command"][2]
    for line in ("masterauth $REDIS_PASSWORD", "replica-announce-ip $REDIS_ANNOUNCE"):
        assert re.search(rf"^{re.escape(line)}$", node_script, re.M), line
    # Whatever a setting names is there.
    assert urllib.parse.urlsplit(config["REDIS_URL"]).hostname in services
    for item in config["REDIS_SENTINELS"].split(","):
        assert item.split(".")[1].split(":")[0] in services


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_redis_user_follows_the_primary_in_prod(
    overlay: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """prod: every Redis user (game services, lobby, matchmakers, bot workers) gets the
    Sentinels and the master name, and game services wait for one replica per move
    (REDIS_WAIT_REPLICAS=1), fewer than the replicas a lost node leaves; the code reads them
    that way. dev: one Redis, by REDIS_URL, none of these."""
    docs = render(overlay)
    sentinel_settings = {"REDIS_SENTINELS", "REDIS_SENTINEL_MASTER", "REDIS_WAIT_REPLICAS"}
    for name in _running(REDIS_USERS, _has_accounts(docs)):
        env = _environment(overlay, name, _FAKE_SECRETS)
        if overlay == "dev":
            assert not sentinel_settings & set(env), name
            assert env["REDIS_URL"] == "redis://redis:6379/0"
            continue
        replicas = find(docs, "StatefulSet", "redis")["spec"]["replicas"] - 1
        assert env["REDIS_WAIT_REPLICAS"] == "1", name
        assert int(env["REDIS_WAIT_REPLICAS"]) <= replicas - 1, "a lost node stops every move"
        assert env["REDIS_SENTINEL_MASTER"] == "tabletop"
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("INTERNAL_KEY", "test-internal-key-0123456789")
        sentinels = sentinels_from_env()
        assert [f"{host}:{port}" for host, port in sentinels] == env["REDIS_SENTINELS"].split(",")
        assert len(sentinels) == find(docs, "StatefulSet", "redis")["spec"]["replicas"]
        if name in games.names():
            assert ServiceSettings.from_env(50051).wait_replicas == 1


def test_dev_keeps_its_single_redis() -> None:
    """The dev overlay runs the base's one Redis, as before: one StatefulSet `redis` of one
    pod behind the Service `redis` that REDIS_URL names, and nothing of Sentinel."""
    docs = render("dev")
    base = {
        (d["kind"], d["metadata"]["name"]): d
        for d in yaml.safe_load_all((DEPLOY / "k8s" / "base" / "redis.yaml").read_text())
    }
    redis_objects = [
        (d["kind"], d["metadata"]["name"])
        for d in docs
        if "redis" in d["metadata"]["name"] and d["kind"] not in ("Secret", "NetworkPolicy")
    ]
    assert sorted(redis_objects) == sorted(base)
    secret = find(docs, "Secret", "tabletop-redis")["metadata"]["name"]
    for key, doc in base.items():
        rendered = find(docs, *key)
        expected = json.loads(json.dumps(doc["spec"]).replace('"tabletop-redis"', f'"{secret}"'))
        if key[0] == "StatefulSet":
            (spec,) = expected["template"]["spec"]["containers"]
            spec["image"] = container(docs, "redis")["image"]
        assert rendered["spec"] == expected, key
    assert find(docs, "StatefulSet", "redis")["spec"]["replicas"] == 1
    assert not [d for d in docs if "sentinel" in json.dumps(d).lower()]


def test_prod_redis_images_are_the_base_pin() -> None:
    """prod's Redis nodes and Sentinels run the image base pins for dev (one digest to move)."""
    (pinned,) = {c["image"] for c in containers(render("dev")) if c["name"] == "redis"}
    prod = {
        c["name"]: c["image"] for c in containers(render("prod")) if c["name"] in REDIS_CONTAINERS
    }
    assert prod == {"redis": pinned, "sentinel": pinned}


def test_prod_redis_and_sentinels_start_and_fail_over_the_way_the_manifests_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run prod's own Redis node and Sentinel commands with the local redis-server: on the
    first start (no Sentinel answers) the first node is primary and the others its replicas;
    the Sentinels find both replicas and each other; the password is on no command line,
    wanted by nodes and Sentinels alike; the readiness probes pass only with it; the
    platform's client (REDIS_SENTINELS, REDIS_WAIT_REPLICAS) writes through them with a
    replica's acknowledgement. Kill the primary: the Sentinels promote a replica, the client
    follows; start the old primary again: it asks the Sentinels and comes back as a replica of
    the new one, with its data; a restarted Sentinel watches the new primary too. Without a
    password neither starts."""
    password = "Zm9v+YmFy/YmF6-" + os.urandom(8).hex()
    cluster = ProdRedis(
        tmp_path,
        password,
        [Host(f"127.0.0.{n}") for n in (2, 3, 4)],
        [Host(f"127.0.0.{n}") for n in (5, 6, 7)],
    )
    first, second, third = cluster.nodes
    try:
        for host in cluster.nodes:
            process = cluster.start("redis", host)
            assert Path(f"/proc/{process.pid}/comm").read_text().strip() == "redis-server"
        for host in cluster.sentinel_hosts:
            process = cluster.start("sentinel", host)
            assert Path(f"/proc/{process.pid}/comm").read_text().strip() == "redis-server"
            config = tmp_path / f"sentinel-{host.address}" / "sentinel.conf"
            assert os.stat(config).st_mode & 0o077 == 0
        assert "replicaof" not in cluster.log("redis", first.address)
        for replica in (second, third):
            assert f"replicaof {first.address} {cluster.node_port}" in cluster.log(
                "redis", replica.address
            )
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            with contextlib.suppress(OSError):  # a process that ended meanwhile
                assert password.encode() not in cmdline.read_bytes(), cmdline
        for address, port in ((first.address, cluster.node_port),
                              (third.address, cluster.node_port),
                              (cluster.sentinel_addresses[0], cluster.sentinel_port)):  # fmt: skip
            with (
                redis.Redis(host=address, port=port) as anonymous,
                pytest.raises(redis.AuthenticationError),
            ):
                anonymous.ping()

        def watched() -> bool:
            for address in cluster.sentinel_addresses:
                with cluster.sentinel(address) as client:
                    state = client.sentinel_master(cluster.master)
                if state["num-slaves"] < 2 or state["num-other-sentinels"] < 2:
                    return False
            return True

        cluster.wait(watched, "the Sentinels did not find the replicas and each other")
        assert {cluster.primary(a) for a in cluster.sentinel_addresses} == {first.address}
        with cluster.node(first.address) as client:
            assert client.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"
            assert client.config_get("appendonly")["appendonly"] == "yes"
            replicas = client.info("replication")
        assert replicas["connected_slaves"] == 2
        assert {replicas[f"slave{i}"]["ip"] for i in range(2)} == {second.address, third.address}

        # The readiness probes, pointed at a node and a Sentinel: only with the password.
        for probed, address in (
            (cluster.node_container, second.address),
            (cluster.sentinel_container, cluster.sentinel_addresses[1]),
        ):
            env = cluster.env(probed)
            target = f"redis-cli -h {address}" + (
                f" -p {cluster.node_port}" if probed is cluster.node_container else ""
            )
            for probe in ("readinessProbe", "livenessProbe"):
                if "exec" not in probed[probe]:
                    continue
                check = [p.replace("redis-cli", target) for p in probed[probe]["exec"]["command"]]
                assert subprocess.run(check, env=env, check=False).returncode == 0, probe
            check = [
                p.replace("redis-cli", target) for p in probed["readinessProbe"]["exec"]["command"]
            ]
            del env["REDISCLI_AUTH"]
            assert subprocess.run(check, env=env, check=False).returncode != 0

        # The platform's client, with the prod settings, through the Sentinels.
        settings = _environment("prod", "esoloe", _FAKE_SECRETS)
        monkeypatch.setenv("REDIS_SENTINELS", cluster.sentinels)
        monkeypatch.setenv("REDIS_SENTINEL_MASTER", settings["REDIS_SENTINEL_MASTER"])
        monkeypatch.setenv("REDIS_PASSWORD", password)
        wait_replicas = int(settings["REDIS_WAIT_REPLICAS"])

        async def write(key: str) -> str:
            client = connect_redis(settings["REDIS_URL"], name="test")
            try:
                await client.set(key, "played")
                assert await client.wait(wait_replicas, 5000) >= wait_replicas
                return str(await client.role())
            finally:
                await client.aclose()

        assert "master" in asyncio.run(write("before"))

        # Lose the primary's node.
        cluster.processes["redis", first.address].kill()
        cluster.processes["redis", first.address].wait()

        def failed_over() -> bool:
            return all(
                cluster.primary(h) not in (None, first.address) for h in cluster.sentinel_addresses
            )

        cluster.wait(failed_over, "no failover")
        new = cluster.primary(cluster.sentinel_addresses[0])
        assert new in (second.address, third.address)
        cluster.wait(lambda: cluster.node(new).role()[0] == "master", "not promoted")
        assert "master" in asyncio.run(write("after"))

        # The old primary comes back: it asks the Sentinels, and follows the new primary.
        cluster.start("redis", first)
        (*_, restarted) = [
            line
            for line in cluster.log("redis", first.address).splitlines()
            if line.startswith("primary: ")
        ]
        assert restarted.endswith(f"this node: {first.address} replicaof {new} {cluster.node_port}")
        with cluster.node(first.address) as client:
            cluster.wait(
                lambda: client.info("replication").get("master_link_status") == "up",
                "the old primary did not sync from the new one",
            )
            assert client.info("replication")["master_host"] == new
            assert client.get("before") == "played"
            assert client.get("after") == "played"

        # Sentinels that restart watch the new primary: all of them at once (the first asks
        # redis-0, now a replica, for its primary; the others ask the first).
        for sentinel in cluster.sentinel_hosts:
            cluster.processes["sentinel", sentinel.address].send_signal(signal.SIGTERM)
            assert cluster.processes["sentinel", sentinel.address].wait(patience(10)) == 0
        for sentinel in cluster.sentinel_hosts:
            cluster.start("sentinel", sentinel)
            (*_, watching) = [
                line
                for line in cluster.log("sentinel", sentinel.address).splitlines()
                if line.startswith("watching")
            ]
            assert watching == f"watching {cluster.master} at {new} {cluster.node_port}"
            assert cluster.primary(sentinel.address) == new

        process = cluster.processes["redis", new]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=patience(10)) == 0, "redis-server did not shut down cleanly"
    finally:
        cluster.stop()
    for workload in ("redis", "sentinel"):
        command, env = cluster.command(workload, "127.0.0.8")
        empty = subprocess.run(
            command, env={**env, "REDIS_PASSWORD": ""}, cwd=tmp_path, capture_output=True,
            timeout=patience(10), check=False,
        )  # fmt: skip
        assert empty.returncode != 0, f"{workload} started without a password"


# --- The public surface: only the gateway's gRPC and web ports, over TLS in prod -------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_metrics_are_never_public(overlay: str) -> None:
    """A Service reachable from outside the cluster (LoadBalancer, NodePort) exposes the
    gateway's gRPC and web ports and nothing else; the gateway's own Service carries only
    those, and its metrics (and in prod the plaintext health port) are on a ClusterIP Service."""
    docs = render(overlay)
    gateway = container(docs, "gateway")
    grpc_port = next(p["containerPort"] for p in gateway["ports"] if p["name"] == "grpc")
    web_port = next(p["containerPort"] for p in gateway["ports"] if p["name"] == "web")
    public = [
        d
        for d in docs
        if d["kind"] == "Service" and d["spec"].get("type") in ("LoadBalancer", "NodePort")
    ]
    if overlay == "prod":
        assert [d["metadata"]["name"] for d in public] == ["gateway"]
    for service in [*public, find(docs, "Service", "gateway")]:
        assert service["spec"]["selector"] == {"app.kubernetes.io/name": "gateway"}
        assert [(p["port"], p["targetPort"]) for p in service["spec"]["ports"]] == [
            (grpc_port, "grpc"),
            (web_port, "web"),
        ]
    internal = find(docs, "Service", "gateway-internal")
    assert internal["spec"]["type"] == "ClusterIP"
    names = {p["name"] for p in internal["spec"]["ports"]}
    assert names == ({"metrics", "health"} if overlay == "prod" else {"metrics"})
    published = {name: service.get("ports", []) for name, service in compose()["services"].items()}
    published = {name: ports for name, ports in published.items() if ports}
    assert list(published) == ["gateway"]
    # The gateway's gRPC port, on the host's 50050 or the one GATEWAY_PORT names; its web port,
    # on 8080 or WEB_PORT.
    assert [mapping.rsplit(":", 1) for mapping in published["gateway"]] == [
        ["${GATEWAY_PORT:-50050}", "50050"],
        ["${WEB_PORT:-8080}", "8080"],
    ]


def test_prod_gateway_speaks_tls_and_bot_workers_check_its_name() -> None:
    docs = render("prod")
    gateway_deployment = find(docs, "Deployment", "gateway")
    pod = gateway_deployment["spec"]["template"]["spec"]
    gateway = container(docs, "gateway")
    env = {e["name"]: e["value"] for e in gateway["env"]}
    (volume,) = [v for v in pod["volumes"] if "secret" in v]
    assert volume["secret"]["secretName"] == "tabletop-tls"
    (mount,) = [m for m in gateway["volumeMounts"] if m["name"] == volume["name"]]
    assert mount["readOnly"] is True
    assert env["TLS_CERT_FILE"] == f"{mount['mountPath']}/tls.crt"
    assert env["TLS_KEY_FILE"] == f"{mount['mountPath']}/tls.key"
    health_port = int(env["HEALTH_LISTEN"].rsplit(":", 1)[1])
    ports = {p["name"]: p["containerPort"] for p in gateway["ports"]}
    assert ports["health"] == health_port != ports["grpc"]
    assert gateway["readinessProbe"]["grpc"]["port"] == health_port
    assert gateway["livenessProbe"]["grpc"]["port"] == health_port
    bots = _environment("prod", "bots", {"tabletop-token": {}, "tabletop-redis": {}})
    assert bots["GATEWAY_TLS"] == "true"
    assert bots["GATEWAY_TLS_SERVER_NAME"]
    assert bots["GATEWAY_TLS_SERVER_NAME"] not in bots["GATEWAY_ADDR"]
    text = (DEPLOY / "k8s" / "overlays" / "prod" / "kustomization.yaml").read_text()
    assert "create secret tls tabletop-tls" in text
    for deployment in ("gateway", "bots"):
        dev = _environment("dev", deployment)
        assert not {"TLS_CERT_FILE", "TLS_KEY_FILE", "GATEWAY_TLS"} & set(dev), "dev: plaintext"
    for service in compose()["services"].values():
        assert not {"TLS_CERT_FILE", "GATEWAY_TLS"} & set(service.get("environment", {}))


def _health(channel: grpc.Channel, service: str = "") -> int:
    reply = health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service=service), timeout=patience(5)
    )
    return int(reply.status)


def test_prod_gateway_serves_tls_with_the_manifest_environment(tmp_path: Path) -> None:
    """The prod overlay's gateway environment, with a certificate for the name the bot workers
    check put where the Secret is mounted: the public port speaks TLS only, and the probes'
    plaintext port answers "liveness"."""
    name = _environment("prod", "bots", {"tabletop-token": {}, "tabletop-redis": {}})[
        "GATEWAY_TLS_SERVER_NAME"
    ]
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2",
         "-subj", f"/CN={name}", "-addext", f"subjectAltName=DNS:{name}"],
        check=True, capture_output=True,
    )  # fmt: skip
    secrets = {
        "tabletop-internal": {"INTERNAL_KEY": "test-internal-key-0123456789"},
        "tabletop-token": {"TOKEN_SECRET": "test-signing-key-0123456789-abcdefghij"},
    }
    env = _environment("prod", "gateway", secrets)
    mount = container(render("prod"), "gateway")["volumeMounts"][0]["mountPath"]
    env["TLS_CERT_FILE"] = env["TLS_CERT_FILE"].replace(mount, str(tmp_path))
    env["TLS_KEY_FILE"] = env["TLS_KEY_FILE"].replace(mount, str(tmp_path))
    port, health_port = free_port(), free_port()
    env |= {
        "LISTEN": f"127.0.0.1:{port}",
        "HEALTH_LISTEN": f"127.0.0.1:{health_port}",
        "METRICS_PORT": str(free_port()),
    }
    gateway = subprocess.Popen([sys.executable, "-m", "gateway"], env={**os.environ, **env})
    try:
        serving = health_pb2.HealthCheckResponse.SERVING
        deadline = time.monotonic() + patience(30)
        with grpc.insecure_channel(f"127.0.0.1:{health_port}") as channel:
            while True:
                try:
                    assert _health(channel, LIVENESS) == serving
                    break
                except grpc.RpcError:
                    assert gateway.poll() is None, "the gateway exited"
                    assert time.monotonic() < deadline, "no liveness on HEALTH_LISTEN"
                    time.sleep(0.2)
        credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        options = [("grpc.ssl_target_name_override", name)]
        with grpc.secure_channel(f"127.0.0.1:{port}", credentials, options) as channel:
            assert _health(channel, LIVENESS) == serving
        with (
            grpc.insecure_channel(f"127.0.0.1:{port}") as channel,
            pytest.raises(grpc.RpcError),
        ):
            _health(channel, LIVENESS)
    finally:
        gateway.send_signal(signal.SIGTERM)
        assert gateway.wait(timeout=patience(30)) == 0


# --- Probes, disruption budgets, replica counts, draining -----------------------------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_liveness_asks_for_the_process_and_readiness_for_its_dependencies(overlay: str) -> None:
    """A liveness probe that followed Redis would restart every pod during a Redis outage:
    liveness asks for "liveness" (the process answers), readiness for the overall status
    (which follows Redis), on a port the container declares."""
    docs = render(overlay)
    for name in _running(PROCESSES, _has_accounts(docs)):
        probed = container(docs, name)
        ports = {p["containerPort"] for p in probed["ports"]}
        liveness = probed["livenessProbe"]["grpc"]
        readiness = probed["readinessProbe"]["grpc"]
        assert liveness == {"port": readiness["port"], "service": LIVENESS}, name
        assert "service" not in readiness, name
        assert readiness["port"] in ports, name


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_disruption_budgets_allow_one_pod_at_a_time(overlay: str) -> None:
    """maxUnavailable 1, not minAvailable: with minAvailable 1 of 3 a drain may take two pods
    at once, and of 1 replica it blocks every drain."""
    docs = render(overlay)
    budgets = [d for d in docs if d["kind"] == "PodDisruptionBudget"]
    redis = {"redis"} if overlay == "prod" else set()
    processes = set(_running(PROCESSES, _has_accounts(docs)))
    assert {b["metadata"]["name"] for b in budgets} == processes | redis
    for budget in budgets:
        assert budget["spec"]["maxUnavailable"] == 1, budget["metadata"]["name"]
        assert "minAvailable" not in budget["spec"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_autoscaled_deployments_set_no_replica_count(overlay: str) -> None:
    """An applied spec.replicas resets what the autoscaler chose (down to it, at every apply):
    a Deployment an HPA or a KEDA ScaledObject scales sets none."""
    docs = render(overlay)
    scaled = {
        d["spec"]["scaleTargetRef"]["name"] for d in docs if d["kind"] == "HorizontalPodAutoscaler"
    }
    scaled |= {d["spec"]["scaleTargetRef"]["name"] for d in docs if d["kind"] == "ScaledObject"}
    assert {"gateway", "lobby", *games.names()} <= scaled
    for deployment in (d for d in docs if d["kind"] == "Deployment"):
        name = deployment["metadata"]["name"]
        assert ("replicas" in deployment["spec"]) == (name not in scaled), name


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_serving_pods_drain_before_they_stop(overlay: str) -> None:
    """Every container that takes gRPC calls (a `grpc` port) pauses in preStop, so it leaves
    every endpoint list before SIGTERM; the grace period covers that pause plus GRACE_SECONDS
    of draining. The others need only GRACE_SECONDS."""
    docs = render(overlay)
    for deployment in (d for d in docs if d["kind"] == "Deployment"):
        name = deployment["metadata"]["name"]
        pod = deployment["spec"]["template"]["spec"]
        grace = float(_environment(overlay, name, _FAKE_SECRETS)["GRACE_SECONDS"])
        (served,) = pod["containers"]
        pause = 0
        if any(p["name"] == "grpc" for p in served["ports"]):
            command = served["lifecycle"]["preStop"]["exec"]["command"]
            assert command[0] == "sleep", name
            assert len(command) == 2, name
            pause = int(command[1])
            assert pause >= 3, name
        assert pod["terminationGracePeriodSeconds"] > pause + grace, name


_FAKE_SECRETS: dict[str, dict[str, str]] = {
    "tabletop-token": {},
    "tabletop-internal": {},
    "tabletop-redis": {},
}
"""Stand-ins for the Secrets the prod overlay does not make."""


def test_compose_waits_for_the_drain_before_it_kills() -> None:
    """Compose's default stop timeout is 10 s, GRACE_SECONDS is 10 s: give it more."""
    for name, service in compose()["services"].items():
        grace = float(service.get("environment", {}).get("GRACE_SECONDS", "0"))
        assert compose_seconds(service["stop_grace_period"]) > grace, name


# --- What the prod overlay owns, and what it pins ------------------------------------------


def test_prod_leaves_the_namespace_alone() -> None:
    """`kubectl delete -k overlays/prod` must not delete the namespace (and with it Redis's
    volume): the namespace is created by hand, the overlay only names it."""
    docs = render("prod")
    assert [d for d in docs if d["kind"] == "Namespace"] == []
    text = (DEPLOY / "k8s" / "overlays" / "prod" / "kustomization.yaml").read_text()
    kustomization = yaml.safe_load(text)
    assert kustomization["namespace"] == "tabletop"
    for doc in docs:
        assert doc["metadata"]["namespace"] == "tabletop", doc["metadata"]["name"]
    assert "kubectl create namespace tabletop" in text
    assert "kubectl create namespace tabletop" in (ROOT / "docs" / "operations.md").read_text()


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_images_are_pinned_by_digest(overlay: str) -> None:
    """prod: every image by digest. dev: Redis by digest, the image just built, and its own
    PostgreSQL by the tag Compose names (dev only: prod brings its own database)."""
    digest = re.compile(r"[^@\s]+@sha256:[0-9a-f]{64}")
    for pinned in containers(render(overlay)):
        if overlay == "prod" or pinned["name"] == "redis":
            assert digest.fullmatch(pinned["image"]), pinned["image"]
        elif pinned["name"] == "postgres":
            assert pinned["image"] == compose()["services"]["postgres"]["image"]
            assert pinned["imagePullPolicy"] == "Always"  # a tag can move
        else:
            assert pinned["image"] == "tabletop:latest"


def test_a_settings_change_rolls_the_pods(tmp_path: Path) -> None:
    """The ConfigMap is generated: its name carries a hash of its contents, every reference
    follows it, so a changed value is a new name in every pod template (a rollout)."""
    docs = render("dev")
    config = find(docs, "ConfigMap", "tabletop-config")
    assert config["metadata"]["name"] != "tabletop-config"
    for name in _running(PROCESSES, _has_accounts(docs)):
        refs = [
            s["configMapRef"]["name"]
            for s in container(docs, name)["envFrom"]
            if "configMapRef" in s
        ]
        assert refs == [config["metadata"]["name"]], name
    changed = render_with(
        tmp_path,
        "dev",
        {
            "configMapGenerator": [
                {"name": "tabletop-config", "behavior": "merge", "literals": ["GRACE_SECONDS=11"]}
            ]
        },
    )
    new = find(changed, "ConfigMap", "tabletop-config")["metadata"]["name"]
    assert new != config["metadata"]["name"]
    for name in _running(PROCESSES, _has_accounts(changed)):
        refs = [
            s["configMapRef"]["name"]
            for s in container(changed, name)["envFrom"]
            if "configMapRef" in s
        ]
        assert refs == [new], name


# --- NetworkPolicies: exactly the connections the platform makes ---------------------------

MONITORING_LABEL = {"tabletop/monitoring": "true"}
"""The label of the namespaces whose pods may scrape metrics (docs/operations.md)."""

OUTSIDE = {
    "kube-system": ({}, {"kube-dns": {"k8s-app": "kube-dns"}}),
    "monitoring": (MONITORING_LABEL, {"prometheus": {"app.kubernetes.io/name": "prometheus"}}),
    "keda": (
        {},
        {
            "keda-operator": {"app.kubernetes.io/name": "keda-operator"},
            "keda-metrics-apiserver": {"app.kubernetes.io/name": "keda-operator-metrics-apiserver"},
        },
    ),
    "elsewhere": ({}, {"anything": {"app.kubernetes.io/name": "gateway"}}),
}
"""Namespaces besides the platform's, each with its labels and pods (name: labels). A pod
elsewhere labelled like one of ours must not pass for it."""
WORLD = "world"
"""Anything outside the cluster."""

Edge = tuple[str, str, int | str, str]
"""(from, to, port, protocol): pods of ours by component, others as namespace/pod."""


def _matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions", []):
        present = expression["key"] in labels
        value = labels.get(expression["key"])
        operator = expression["operator"]
        if operator == "In" and value not in expression["values"]:
            return False
        if operator == "NotIn" and present and value in expression["values"]:
            return False
        if (operator == "Exists") != present and operator in ("Exists", "DoesNotExist"):
            return False
    return True


class Cluster:
    """The rendered overlay's pods and the policies that select them."""

    def __init__(self, docs: list[dict[str, Any]]) -> None:
        self.policies = [d for d in docs if d["kind"] == "NetworkPolicy"]
        self.namespace = next(d["metadata"].get("namespace", "") for d in docs)
        self.pods: dict[str, tuple[dict[str, str], dict[str, tuple[int, str]]]] = {}
        jobs = [d for d in docs if d["kind"] == "Job"]  # the migration's: known by its label
        for workload in [*workloads(docs), *jobs]:
            template = workload["spec"]["template"]
            ports = {
                p["name"]: (p["containerPort"], p.get("protocol", "TCP"))
                for c in template["spec"]["containers"]
                for p in c.get("ports", [])
            }
            labels = template["metadata"]["labels"]
            name = labels["app.kubernetes.io/name"] if workload in jobs else None
            self.pods[name or workload["metadata"]["name"]] = (labels, ports)
        # A pod someone adds later, that no policy names: denied by default.
        self.pods["newcomer"] = ({"app.kubernetes.io/name": "newcomer"}, {"grpc": (50099, "TCP")})

    @property
    def namespaces(self) -> dict[str, tuple[dict[str, str], dict[str, dict[str, str]]]]:
        return {
            self.namespace: ({}, {name: labels for name, (labels, _) in self.pods.items()}),
            **OUTSIDE,
        }

    def everyone(self) -> set[str]:
        return {
            *self.pods,
            *(f"{ns}/{pod}" for ns, (_, pods) in OUTSIDE.items() for pod in pods),
            WORLD,
        }

    def peers(self, rule_peers: list[dict[str, Any]] | None) -> set[str]:
        if not rule_peers:
            return self.everyone()
        found: set[str] = set()
        for peer in rule_peers:
            if "ipBlock" in peer:
                found.add(f"ip:{peer['ipBlock']['cidr']}")
                continue
            for namespace, (labels, pods) in self.namespaces.items():
                labels = {"kubernetes.io/metadata.name": namespace, **labels}
                if "namespaceSelector" in peer:
                    if not _matches(peer["namespaceSelector"], labels):
                        continue
                elif namespace != self.namespace:
                    continue
                for pod, pod_labels in pods.items():
                    if _matches(peer.get("podSelector", {}), pod_labels):
                        found.add(pod if namespace == self.namespace else f"{namespace}/{pod}")
        return found

    def port(self, pod: str, spec: dict[str, Any] | None) -> tuple[int | str, str] | None:
        """A rule's port as it applies to `pod`: a number, or a name resolved on the pod (None:
        the pod has no such port); no port: every port ("*")."""
        if spec is None:
            return ("*", "*")
        protocol = spec.get("protocol", "TCP")
        if isinstance(spec["port"], int):
            return (spec["port"], protocol)
        if pod not in self.pods:
            return (spec["port"], protocol)
        named = self.pods[pod][1].get(spec["port"])
        return named if named and named[1] == protocol else None

    def edges(self, direction: str) -> set[Edge]:
        found: set[Edge] = set()
        for pod, (labels, _) in self.pods.items():
            selecting = [
                p
                for p in self.policies
                if _matches(p["spec"]["podSelector"], labels)
                and direction in p["spec"]["policyTypes"]
            ]
            assert selecting, f"{pod}: no policy isolates its {direction}"
            for policy in selecting:
                key = "ingress" if direction == "Ingress" else "egress"
                for rule in policy["spec"].get(key, []):
                    others = self.peers(rule.get("from" if key == "ingress" else "to"))
                    for other in others:
                        target = pod if key == "ingress" else other
                        for spec in rule.get("ports") or [None]:
                            port = self.port(target, spec)
                            if port is not None:
                                edge = (other, pod) if key == "ingress" else (pod, other)
                                found.add((*edge, *port))
        return found


def _expected_edges(cluster: Cluster, overlay: str) -> tuple[set[Edge], set[Edge]]:
    def grpc(component: str) -> tuple[int, str]:
        return cluster.pods[component][1]["grpc"]

    game_names = list(games.names())
    accounts = "migrate" in cluster.pods  # the component accounts-database
    redis_users = _running(REDIS_USERS, accounts)
    internal: set[Edge] = set()
    for caller in ("gateway", "lobby", "matchmaker"):
        internal |= {(caller, game, *grpc(game)) for game in game_names}
    internal.add(("gateway", "lobby", *grpc("lobby")))
    if "accounts" in cluster.pods:  # the component accounts-database runs it
        internal.add(("gateway", "accounts", *grpc("accounts")))
        internal.add(("lobby", "accounts", *grpc("accounts")))
        internal.add(("ratings", "accounts", *grpc("accounts")))
    internal.add(("bots", "gateway", *grpc("gateway")))
    for user in redis_users:
        internal.add((user, "redis", 6379, "TCP"))
    database: set[Edge] = set()
    if accounts:
        # The component accounts-database: the accounts service, the lobby, the migration Job
        # and the ratings consumers reach port 5432 anywhere (the database may be outside the
        # cluster); the dev overlay's own PostgreSQL lets only them in.
        database = {
            (c, other, 5432, "TCP") for c in DATABASE_CLIENTS for other in cluster.everyone()
        }
        if "postgres" in cluster.pods:
            internal |= {(c, "postgres", 5432, "TCP") for c in DATABASE_CLIENTS}
    if overlay == "prod":
        # Redis under Sentinel, a Sentinel in each Redis pod: the users ask the Sentinels; the
        # nodes replicate from each other and ask the Sentinels at start; the Sentinels watch
        # the nodes and talk to each other.
        sentinel = cluster.pods["redis"][1]["sentinel"]
        for user in redis_users:
            internal.add((user, "redis", *sentinel))
        internal.add(("redis", "redis", 6379, "TCP"))
        internal.add(("redis", "redis", *sentinel))
    ingress = set(internal)
    public = (grpc("gateway"), cluster.pods["gateway"][1]["web"])  # the gRPC and the web port
    ingress |= {(peer, "gateway", *port) for peer in cluster.everyone() for port in public}
    processes = _running(PROCESSES, accounts)
    ingress |= {("monitoring/prometheus", name, 9464, "TCP") for name in processes}
    if overlay == "prod":
        ingress.add(("keda/keda-operator", "redis", 6379, "TCP"))
        ingress.add(("keda/keda-operator", "redis", *sentinel))
    egress = internal | database
    for pod in cluster.pods:
        egress |= {(pod, "kube-system/kube-dns", 53, protocol) for protocol in ("UDP", "TCP")}
    return ingress, egress


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_network_policies_allow_exactly_what_the_platform_needs(overlay: str) -> None:
    """Evaluate the rendered NetworkPolicies over the overlay's pods, a pod added later that
    no policy names, and a few outside ones (DNS, a Prometheus in a namespace with the
    monitoring label, KEDA, a pod elsewhere, the world): the allowed connections, each way, are
    exactly the expected ones. An over-broad rule or a missing one fails."""
    cluster = Cluster(render(overlay))
    ingress, egress = _expected_edges(cluster, overlay)
    assert cluster.edges("Ingress") == ingress
    assert cluster.edges("Egress") == egress


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_probes_from_nodes_component_opens_only_the_probed_ports(
    overlay: str, tmp_path: Path
) -> None:
    """For a network plugin that applies policies to the node's own traffic: the component
    lets the nodes reach exactly the ports the kubelet probes (and the public port), and
    changes nothing else."""
    component = DEPLOY / "k8s" / "components" / "probes-from-nodes"
    docs = render_with(tmp_path, overlay, {"components": [os.path.relpath(component, tmp_path)]})
    cluster = Cluster(docs)
    del cluster.pods["newcomer"]  # its ports are its own affair
    ingress, egress = _expected_edges(cluster, overlay)
    (policy,) = [p for p in cluster.policies if p["metadata"]["name"] == "probes-from-nodes"]
    (rule,) = policy["spec"]["ingress"]
    (peer,) = rule["from"]
    nodes = f"ip:{peer['ipBlock']['cidr']}"
    probed: set[Edge] = {
        (nodes, "gateway", *cluster.pods["gateway"][1][name]) for name in ("grpc", "web")
    }
    for workload in workloads(docs):
        for probed_container in workload["spec"]["template"]["spec"]["containers"]:
            ports = {p["name"]: p["containerPort"] for p in probed_container["ports"]}
            for probe in ("livenessProbe", "readinessProbe"):
                action = probed_container[probe]
                port = (action.get("grpc") or action.get("tcpSocket") or {}).get("port")
                if port is not None:
                    number = ports.get(port, port)
                    probed.add((nodes, workload["metadata"]["name"], number, "TCP"))
    assert cluster.edges("Ingress") == ingress | probed
    assert cluster.edges("Egress") == egress


def test_dockerfile_builds_from_what_the_repository_has() -> None:
    """No Docker engine here: check the Dockerfile's shape instead. Two stages, the project's
    own proto target in the first, the web client's built files served from the image
    (WEB_ROOT), a non-root user in the slim runtime stage, and a command that names a real
    process."""
    text = (DEPLOY / "Dockerfile").read_text()
    stages = re.findall(r"^FROM (\S+)", text, re.M)
    assert len(stages) == 2
    assert all(stage.endswith("-slim") or " AS " in stage for stage in stages)
    assert "make proto" in text
    assert "COPY web/dist /opt/web" in text
    assert "WEB_ROOT=/opt/web" in text
    assert re.search(r"^USER 10001", text, re.M)
    entry = json.loads(re.search(r"^ENTRYPOINT (.+)$", text, re.M).group(1))  # type: ignore[union-attr]
    command = json.loads(re.search(r"^CMD (.+)$", text, re.M).group(1))  # type: ignore[union-attr]
    assert entry == ["python", "-m"]
    assert importlib.util.find_spec(f"{command[0]}.__main__") is not None
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", "gen", ".git"} <= set(ignored)


def test_operations_doc_names_what_an_operator_creates() -> None:
    """docs/operations.md says which Secrets to create, the namespace label monitoring needs,
    how TLS is set up (or terminated in front) and how clients connect with it."""
    reference = (ROOT / "docs" / "operations.md").read_text()
    for secret in ("tabletop-token", "tabletop-internal", "tabletop-redis", "tabletop-tls"):
        assert f"`{secret}`" in reference, secret
    (label,) = MONITORING_LABEL.items()
    assert f"{label[0]}={label[1]}" in reference
    for flag in ("--tls", "--ca-file", "--server-name"):
        assert f"`{flag}" in reference, flag
    assert "terminate TLS in front" in reference
    assert "make check-manifests" in reference


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_accounts_database_component_runs_the_accounts_service_with_its_database_and_a_migration(
    overlay: str, tmp_path: Path
) -> None:
    """The component for accounts (the dev overlay has it; prod as an operator's overlay adds
    it): the accounts service and the lobby get DATABASE_URL from the Secret tabletop-database,
    the gateways only the accounts service's address (ACCOUNTS_ADDR), the lobby that address
    too, a Job runs `tabletop migrate` with it (hardened like every pod), the ratings consumers
    run with it, with that address too and with the settings, internal key and Redis password
    the matchmakers get (the gateways' image, as the Job's); the gateways, the lobby and the
    consumers may reach the accounts service's gRPC port, which takes calls from them alone,
    and the accounts service, the lobby, the Job and the consumers may reach PostgreSQL's port
    (in dev, that of its own PostgreSQL, which lets only them in); the consumers reach Redis
    (and its Sentinels in prod) and the accounts service and nothing else; nothing else
    changes."""
    component = DEPLOY / "k8s" / "components" / "accounts-database"
    if overlay == "dev":
        docs = render("dev")
        secret = find(docs, "Secret", "tabletop-database")["metadata"]["name"]
    else:
        # As an operator's overlay adds it (and `make check-manifests`): in the overlay's
        # namespace, which the component's objects take, and the generated ConfigMap's name
        # with it.
        kustomization = DEPLOY / "k8s" / "overlays" / overlay / "kustomization.yaml"
        namespace = yaml.safe_load(kustomization.read_text())["namespace"]
        extra = {"namespace": namespace, "components": [os.path.relpath(component, tmp_path)]}
        docs = render_with(tmp_path, overlay, extra)
        secret = "tabletop-database"
        assert {d["metadata"]["namespace"] for d in docs} == {namespace}
    gateway = find(docs, "Deployment", "gateway")
    (gateway_container,) = gateway["spec"]["template"]["spec"]["containers"]
    assert {"secretRef": {"name": secret}} not in gateway_container["envFrom"]
    gateway_env = {e["name"]: e["value"] for e in gateway_container["env"]}
    assert gateway_env["ACCOUNTS_ADDR"] == "dns:///accounts:50056"
    accounts = container(docs, "accounts")
    assert tuple(accounts["args"]) == ("services.accounts",)
    assert accounts["image"] == gateway_container["image"]  # the same release's code
    assert accounts["envFrom"][-1] == {"secretRef": {"name": secret}}
    assert {"secretRef": {"name": "tabletop-internal"}} in accounts["envFrom"] or any(
        "tabletop-internal" in json.dumps(s) for s in accounts["envFrom"]
    )
    (port,) = find(docs, "Service", "accounts")["spec"]["ports"][:1]
    assert port["port"] == 50056
    # The lobby reads the archive from the same database: the Secret added to what it had.
    lobby = container(docs, "lobby")["envFrom"]
    assert lobby[-1] == {"secretRef": {"name": secret}}
    # It asks the accounts service for accounts' usernames.
    lobby_env = {e["name"]: e["value"] for e in container(docs, "lobby")["env"]}
    assert lobby_env["ACCOUNTS_ADDR"] == "dns:///accounts:50056"
    if overlay == "prod":
        assert lobby[:-1] == container(render("prod"), "lobby")["envFrom"]
    assert _database_readers(docs) == set(DATABASE_CLIENTS)
    job = find(docs, "Job", "tabletop-migrate")
    pod = job["spec"]["template"]["spec"]
    (migrate,) = pod["containers"]
    assert migrate["args"][:2] == list(MIGRATE)
    assert cli.main([*migrate["args"][1:], "--database", ""]) == 2  # options the CLI takes
    assert migrate["envFrom"] == [{"secretRef": {"name": secret}}]
    assert migrate["image"] == gateway_container["image"]  # the same release's migrations
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["automountServiceAccountToken"] is False
    assert migrate["securityContext"]["readOnlyRootFilesystem"] is True
    assert migrate["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert migrate["resources"]["limits"]
    ratings = container(docs, "ratings")
    assert tuple(ratings["args"]) == ("services.ratings",)
    assert ratings["image"] == gateway_container["image"]  # the same release's code
    assert {"secretRef": {"name": secret}} in ratings["envFrom"]
    # The rest of its environment is a Redis user's that calls a service: the matchmakers'.
    matchmaker = container(docs, "matchmaker")["envFrom"]
    assert [s for s in ratings["envFrom"] if s != {"secretRef": {"name": secret}}] == matchmaker
    # It asks the accounts service when accounts were made (the deal of the day's tables).
    ratings_env = {e["name"]: e["value"] for e in ratings["env"]}
    assert ratings_env["ACCOUNTS_ADDR"] == "dns:///accounts:50056"
    assert find(docs, "PodDisruptionBudget", "ratings")["spec"]["maxUnavailable"] == 1
    cluster = Cluster(docs)
    ingress, egress = _expected_edges(cluster, overlay)
    assert cluster.edges("Ingress") == ingress
    assert cluster.edges("Egress") == egress
    everyone = cluster.everyone()
    assert {(c, other, 5432, "TCP") for c in DATABASE_CLIENTS for other in everyone} <= egress
    if overlay == "dev":
        assert {(c, "postgres", 5432, "TCP") for c in DATABASE_CLIENTS} <= ingress
    # The consumers' every connection: DNS, PostgreSQL's port, Redis (in prod its Sentinels too),
    # the accounts service's gRPC port, and in, only monitoring's scrape.
    redis_ports = {port for port, _ in cluster.pods["redis"][1].values()}  # node, Sentinel
    assert {(to, port) for source, to, port, _ in egress if source == "ratings"} == {
        ("kube-system/kube-dns", 53),
        *(("redis", port) for port in redis_ports),
        *((other, 5432) for other in everyone),
        ("accounts", cluster.pods["accounts"][1]["grpc"][0]),
    }
    assert {(source, port) for source, to, port, _ in ingress if to == "ratings"} == {
        ("monitoring/prometheus", 9464)
    }
    # The accounts service: in, the gateways', the lobby's and the ratings consumers' calls and
    # monitoring's scrape; out, DNS and PostgreSQL's port only.
    assert {(source, port) for source, to, port, _ in ingress if to == "accounts"} == {
        ("gateway", 50056),
        ("lobby", 50056),
        ("ratings", 50056),
        ("monitoring/prometheus", 9464),
    }
    assert {(to, port) for source, to, port, _ in egress if source == "accounts"} == {
        ("kube-system/kube-dns", 53),
        *((other, 5432) for other in everyone),
    }
    # and the database the migration makes is the one the gateway's code reads: tested with a
    # real PostgreSQL in tests/integration/test_database_backup.py (`tabletop migrate`)


def test_dev_runs_the_postgresql_its_database_url_names() -> None:
    """The dev overlay's DATABASE_URL names its own PostgreSQL (the Service `postgres`, the
    user and database `tabletop`) with the password PostgreSQL takes from tabletop-postgres;
    the password is in no ConfigMap, and only PostgreSQL gets tabletop-postgres."""
    docs = render("dev")

    def decoded(name: str, key: str) -> str:
        return base64.b64decode(find(docs, "Secret", name)["data"][key]).decode()

    password = decoded("tabletop-postgres", "POSTGRES_PASSWORD")
    assert re.fullmatch(r"[A-Za-z0-9]{16,}", password), "it goes in a URL as it is"
    url = urllib.parse.urlsplit(decoded("tabletop-database", "DATABASE_URL"))
    assert (url.scheme, url.username, url.password) == ("postgresql", "tabletop", password)
    assert (url.hostname, url.port, url.path) == ("postgres", 5432, "/tabletop")
    service = find(docs, "Service", "postgres")
    (port,) = service["spec"]["ports"]
    assert port["port"] == 5432
    assert service["spec"]["selector"] == {"app.kubernetes.io/name": "postgres"}
    secret = find(docs, "Secret", "tabletop-postgres")["metadata"]["name"]
    for doc in docs:
        if doc["kind"] == "ConfigMap":
            assert password not in json.dumps(doc), doc["metadata"]["name"]
    for each in containers(docs):
        uses = secret in json.dumps(each)
        assert uses == (each["name"] == "postgres"), each["name"]
