"""The dev overlay (deploy/k8s/overlays/dev) played by `podman kube play`, since no Kubernetes
control plane installs here.

Podman 4.3 plays Pods and Deployments, but not StatefulSets, Jobs, Services, Secrets nor
NetworkPolicies, and it names a Deployment's pod `<name>-pod-0`, which no Service name resolves
to. So each workload's pod template (Deployments, StatefulSets and the migration Job) is played
as a Pod named as the Service that selects it: on a podman network a pod's name resolves as a
Service's does in a cluster. What podman would not read is resolved the way the kubelet resolves
it: `envFrom` and `valueFrom` become literal values (the rendered Secrets and ConfigMap, the
container's own memory limit), a StatefulSet's volume claim template becomes a volume made as a
provisioner would make it, and images name the ones built here. The probes are read off the
manifests and run by `KubeStack.ready`, as the kubelet would, since podman does not run
readiness probes. Container ports are left out (podman would publish each on the host; in a
cluster they only name the ports). Everything else (commands, arguments, resources, security
contexts) is played as written. NetworkPolicies are not enforced here (tests/test_deploy.py
checks them)."""

from __future__ import annotations

import base64
import copy
import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.containers.conftest import IMAGE, run
from tests.manifests import quantity_mib
from tests.timing import patience

WORKLOADS = ("Deployment", "StatefulSet", "Job")
PROBES = ("readinessProbe", "livenessProbe", "startupProbe")


def _image(name: str) -> str:
    """The local image the manifest's `name` means: the platform's image as built here, a base
    image by its tag (the digest pins the registry's copy, which is not reachable here)."""
    name = name.split("@", 1)[0]
    if name.split(":", 1)[0] == "tabletop":
        return IMAGE
    return name if "/" in name else f"docker.io/library/{name}"


def _value(reference: dict[str, Any], container: dict[str, Any], sources: dict[str, Any]) -> str:
    if "secretKeyRef" in reference:
        ref = reference["secretKeyRef"]
        return str(sources[ref["name"]][ref["key"]])
    if "configMapKeyRef" in reference:
        ref = reference["configMapKeyRef"]
        return str(sources[ref["name"]][ref["key"]])
    ref = reference["resourceFieldRef"]
    if ref["resource"] != "limits.memory" or ref.get("divisor") != "1Mi":
        raise ValueError(f"no value for resourceFieldRef {ref}")
    return str(quantity_mib(container["resources"]["limits"]["memory"]))


def _environment(container: dict[str, Any], sources: dict[str, Any]) -> list[dict[str, str]]:
    """The container's environment as literal values: `envFrom` first, then `env`, which
    overrides it (as in Kubernetes)."""
    values: dict[str, str] = {}
    for source in container.get("envFrom", []):
        ref = source.get("configMapRef") or source["secretRef"]
        values.update({k: str(v) for k, v in sources[ref["name"]].items()})
    for entry in container.get("env", []):
        if "valueFrom" in entry:
            values[entry["name"]] = _value(entry["valueFrom"], container, sources)
        else:
            values[entry["name"]] = str(entry["value"])
    return [{"name": k, "value": v} for k, v in values.items()]


@dataclass(frozen=True)
class Volume:
    """A claim's volume, made before the pods as a provisioner makes it: empty but for
    `lost+found` (as a new ext4 file system; podman would otherwise copy the image's directory
    into it, owner included), owned by the pod's user and group-writable by its fsGroup."""

    name: str
    user: int
    group: int

    def make(self) -> None:
        owner = f"o=uid={self.user},gid={self.group}"
        run("podman", "volume", "create", "--opt", owner, self.name)
        root = Path(
            run("podman", "volume", "inspect", "--format", "{{.Mountpoint}}", self.name).strip()
        )
        (root / "lost+found").mkdir(mode=0o700)
        os.chown(root, self.user, self.group)
        root.chmod(0o2770)


@dataclass
class Played:
    """One workload as played: its pod's name and document, the volumes of its claims and the
    probes of each container."""

    kind: str
    pod: str
    document: dict[str, Any]
    volumes: list[Volume]
    probes: dict[str, dict[str, Any]] = field(default_factory=dict)

    def container(self, name: str) -> str:
        """The podman name of the container `name` of this pod."""
        return f"{self.pod}-{name}"


def translate(docs: list[dict[str, Any]]) -> list[Played]:
    """The rendered overlay's workloads as podman plays them (see the module's docstring)."""
    sources: dict[str, dict[str, str]] = {}
    for doc in docs:
        if doc["kind"] == "Secret":
            data = {k: base64.b64decode(v).decode() for k, v in doc.get("data", {}).items()}
            sources[doc["metadata"]["name"]] = {**data, **doc.get("stringData", {})}
        elif doc["kind"] == "ConfigMap":
            sources[doc["metadata"]["name"]] = doc.get("data", {})
    services = [d for d in docs if d["kind"] == "Service"]
    played = []
    for doc in (d for d in docs if d["kind"] in WORKLOADS):
        name = doc["metadata"]["name"]
        template = copy.deepcopy(doc["spec"]["template"])
        labels = template.get("metadata", {}).get("labels", {})
        selecting = [
            s["metadata"]["name"]
            for s in services
            if s["spec"].get("selector")
            and all(labels.get(k) == v for k, v in s["spec"]["selector"].items())
        ]
        pod = name if name in selecting or not selecting else selecting[0]
        spec = template["spec"]
        volumes: list[Volume] = []
        owner = spec.get("securityContext", {})
        for claim in doc["spec"].get("volumeClaimTemplates", []):
            volume = Volume(
                f"{pod}-{claim['metadata']['name']}",
                owner.get("runAsUser", 0),
                owner.get("fsGroup", owner.get("runAsGroup", 0)),
            )
            volumes.append(volume)
            spec.setdefault("volumes", []).append(
                {"name": claim["metadata"]["name"],
                 "persistentVolumeClaim": {"claimName": volume.name}}
            )  # fmt: skip
        probes = {}
        for container in spec.get("initContainers", []) + spec["containers"]:
            container["image"] = _image(container["image"])
            container["imagePullPolicy"] = "Never"
            container["env"] = _environment(container, sources)
            container.pop("envFrom", None)
            # In a cluster `ports` only names them; podman 4.3 would publish each on the host.
            container.pop("ports", None)
            probes[container["name"]] = {p: container.pop(p) for p in PROBES if p in container}
        if doc["kind"] == "Job":
            spec["restartPolicy"] = "Never"
        template["metadata"] = {**template.get("metadata", {}), "name": pod}
        pod_document = {"apiVersion": "v1", "kind": "Pod", **template}
        played.append(Played(doc["kind"], pod, pod_document, volumes, probes))
    return played


@dataclass
class KubeStack:
    """The overlay's pods, played on the podman network `network` from the file `file`."""

    workloads: list[Played]
    network: str
    file: Path

    def play(self) -> None:
        self.file.write_text(yaml.safe_dump_all([w.document for w in self.workloads]))
        self.remove()
        run("podman", "network", "create", self.network)
        for workload in self.workloads:
            for volume in workload.volumes:
                volume.make()
        run(
            "podman",
            "kube",
            "play",
            "--network",
            self.network,
            str(self.file),
            timeout=patience(600),
        )

    def remove(self) -> None:
        """Every pod, claim and the network (what an interrupted run left, too)."""
        for workload in self.workloads:
            run("podman", "pod", "rm", "-f", "--ignore", workload.pod, check=False)
            for volume in workload.volumes:
                run("podman", "volume", "rm", "-f", volume.name, check=False)
        run("podman", "network", "rm", "-f", self.network, check=False)

    def workload(self, pod: str) -> Played:
        (found,) = [w for w in self.workloads if w.pod == pod]
        return found

    def address(self, pod: str) -> str:
        """The pod's address on the network (as a ClusterIP Service's would be)."""
        info = json.loads(run("podman", "pod", "inspect", pod))
        infra = info[0]["InfraContainerID"] if isinstance(info, list) else info["InfraContainerID"]
        networks = json.loads(
            run("podman", "inspect", "--format", "{{json .NetworkSettings.Networks}}", infra)
        )
        return str(networks[self.network]["IPAddress"])

    def exec(self, pod: str, container: str, *command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["podman", "exec", self.workload(pod).container(container), *command],
            capture_output=True, text=True, timeout=patience(30), check=False,
        )  # fmt: skip

    def logs(self, pod: str, container: str) -> str:
        name = self.workload(pod).container(container)
        return run("podman", "logs", "--tail", "40", name, check=False)

    def report(self, *pods: str) -> str:
        """Each container of `pods`: its state, restarts and last lines of log (what a failed
        test shows)."""
        parts = []
        for pod in pods:
            workload = self.workload(pod)
            for container in workload.probes:
                name = workload.container(container)
                state = run("podman", "inspect", "--format",
                            "{{.State.Status}} exit {{.State.ExitCode}} "
                            "oom {{.State.OOMKilled}} restarts {{.RestartCount}}",
                            name, check=False).strip()  # fmt: skip
                parts.append(f"{name} ({state}):\n{self.logs(pod, container)}")
        return "\n".join(parts)

    def ready(self, workload: Played) -> bool:
        """Every container of the workload answers its readiness probe (a Job's: it exited 0)."""
        for container, probes in workload.probes.items():
            name = workload.container(container)
            state = run("podman", "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}",
                        name, check=False).split()  # fmt: skip
            if workload.kind == "Job":
                if state[:1] == ["exited"] and state[1:] != ["0"]:
                    raise AssertionError(f"{name} failed:\n{self.logs(workload.pod, container)}")
                if state != ["exited", "0"]:
                    return False
                continue
            probe = probes.get("readinessProbe")
            if state[:1] != ["running"]:
                return False
            if probe is None:
                continue
            if "exec" in probe:
                command = probe["exec"]["command"]
            elif "grpc" in probe and not probe["grpc"].get("service"):
                command = ["tabletop", "health", "--target", f"127.0.0.1:{probe['grpc']['port']}"]
            else:
                raise AssertionError(f"{name}: no way here to run the probe {probe}")
            if self.exec(workload.pod, container, *command).returncode != 0:
                return False
        return True

    def wait_ready(self, timeout: float = 240) -> None:
        deadline = time.monotonic() + patience(timeout)
        waiting = list(self.workloads)
        while waiting:
            waiting = [w for w in waiting if not self.ready(w)]
            if waiting and time.monotonic() > deadline:
                pods = [w.pod for w in waiting]
                raise AssertionError(f"not ready: {pods}\n{self.report(*pods)}")
            time.sleep(1)
