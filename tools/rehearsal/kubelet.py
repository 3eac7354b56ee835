"""A kubelet for the pods whose programs the rehearsal has: their containers run as local processes, each pod in
its own network namespace with the address kwok gave it and a private root with its volumes at their mount paths.

kwok plays every pod (bound, running, ready). For a pod running an image whose program is built
(`IMAGE_BINARIES`, or `IMAGE_COMMANDS` for some of an image's subcommands), or a tool image running a shell script (`SCRIPT_IMAGES`: the host's shell, curl and the
rehearsal's kubectl run it), this kubelet takes over the pod's status: not ready until its containers run and
their readiness probes answer, restarted with back-off when they exit (CrashLoopBackOff), succeeded or failed
when a Job's pod ends. Each process gets what a kubelet gives a container:
- its command and args with `$(VAR)` expanded, its env (values, field, Secret and ConfigMap references, service
  links), the image's entrypoint replaced by the built binary;
- its volumes (Secrets, ConfigMaps, projected service-account tokens for its ServiceAccount, downward API;
  emptyDir, hostPath and claims as empty directories) at their mount paths, under a private root;
- the API server as `KUBERNETES_SERVICE_HOST/PORT`, and names through the pod's /etc/hosts as its cluster's DNS
  and public DNS would answer them (runner.py `dns`): its own cluster's Services at their ClusterIPs, which the
  rehearsal's service proxy forwards to a ready endpoint (proxy.py), and every cluster's load balancer hostnames.
What it does not do: enforce securityContext, resources, network policies or image contents; readiness probes
start at once and run each pass until the first success (no initialDelaySeconds; then each periodSeconds, as the
kubelet's) and gRPC probes are TCP connects. Init containers and sidecars of other images
count as done and ready, as kwok plays them.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import re
import shlex
import socket
import subprocess
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import requests
import urllib3

from components.catalog.bringup import SCRIPT_IMAGES as CATALOG_SCRIPT_IMAGES
from components.serving.inference_pool import PICKER_CONTAINER
from tools.rehearsal import cache, fluid
from tools.rehearsal.charts import ModuleFiles
from tools.rehearsal.kube import ApiError, is_ready
from tools.rehearsal.kwok import REFERENCES_CONDITION
from tools.rehearsal.processes import Process, ReconcileLoop
from tools.rehearsal.references import Blocked, blocking_reference

if TYPE_CHECKING:
    from tools.rehearsal.runner import Rehearsal, Target

# Image repository (registry included), optionally `:tag`, -> the built binary that is its entrypoint.
IMAGE_BINARIES: dict[str, str] = {
    "docker.io/karmada/karmada-controller-manager": "karmada-controller-manager",
    "docker.io/karmada/karmada-scheduler": "karmada-scheduler",
    "docker.io/karmada/karmada-webhook": "karmada-webhook",
    "docker.io/karmada/karmada-aggregated-apiserver": "karmada-aggregated-apiserver",
    "docker.io/karmada/karmada-agent": "karmada-agent",
    # The karmada chart's apiServer / kubeControllerManager / etcd images (values.yaml at v1.18.2).
    "registry.k8s.io/kube-apiserver:v1.35.2": "karmada-apiserver",
    "registry.k8s.io/kube-controller-manager:v1.35.2": "karmada-kube-controller-manager",
    "registry.k8s.io/etcd:3.6.6-0": "karmada-etcd",
    "docker.io/kserve/kserve-controller": "kserve-manager",
    "docker.io/kserve/llmisvc-controller": "kserve-llmisvc",
    "docker.io/volcanosh/vc-scheduler": "volcano-scheduler",
    "docker.io/volcanosh/vc-controller-manager": "volcano-controller-manager",
    "docker.io/volcanosh/vc-webhook-manager": "volcano-webhook-manager",
    "ghcr.io/llm-d/llm-d-router-endpoint-picker": "epp",
}
# Image repository -> the only containers (by name) its binary runs, where that binary is a stand-in shown to accept
# only what we render (tools/rehearsal/binaries.py stand_in): the endpoint picker we render (container `epp`,
# components/serving/inference_pool.py), not KServe's LLMInferenceService picker of the same image (container `main`),
# whose config names plugins only v0.9.0 has (disagg-profile-handler, prefill-filter): kwok plays that one.
STAND_IN_CONTAINERS: dict[str, frozenset[str]] = {
    "ghcr.io/llm-d/llm-d-router-endpoint-picker": frozenset({PICKER_CONTAINER})
}
# Image repository -> (the built binary, the subcommands of it the rehearsal runs): a container of that image runs
# the binary when its first argument is one of them; its other commands are played by kwok.
IMAGE_COMMANDS: dict[str, tuple[str, frozenset[str]]] = {
    # envoyproxy/gateway@v1.9.0:charts/gateway-helm/templates/certgen.yaml: the pre-install hook Job runs
    # `envoy-gateway certgen`, which creates the control plane's Secrets and patches the topology injector webhook
    # (internal/cmd/certgen.go L68-L171); the controller (`envoy-gateway server`) is not run: it would provision
    # Envoy and call the AI Gateway's extension server, neither of which the rehearsal runs.
    "docker.io/envoyproxy/gateway": ("envoy-gateway", frozenset({"certgen"})),
}
# Tool images whose containers are shell scripts; the tools they call besides the host's (bash, curl, openssl).
# Whether the image has a shell at all is the catalog's (components/catalog/bringup.py SCRIPT_IMAGES): a script in
# an image without one fails to start, as the container runtime fails it.
SCRIPT_IMAGES: dict[str, tuple[str, ...]] = {
    "docker.io/alpine/k8s": ("kubectl",),
    "docker.io/cfssl/cfssl": (),
    "registry.k8s.io/kubectl": ("kubectl",),
}
SHELLS = ("/bin/sh", "/bin/bash", "sh", "bash", "/usr/bin/env")
# What containerd answers for an entrypoint that is not in the image (the kubelet's StartError, exit code 128).
NO_SHELL_EXIT = 128
# Scripts an image adds beside its program, from its Dockerfile at the pin, with the tools they call: a container
# whose command is one of them runs it with the host's shell.
IMAGE_SCRIPTS: dict[str, dict[str, tuple[ModuleFiles, tuple[str, ...]]]] = {
    # volcano-sh/volcano@v1.15.1:installer/dockerfile/webhook-manager/Dockerfile L22:
    # ADD ./installer/dockerfile/webhook-manager/gen-admission-secret.sh /gen-admission-secret.sh (openssl, kubectl)
    "docker.io/volcanosh/vc-webhook-manager": {
        "/gen-admission-secret.sh": (
            ModuleFiles(
                "volcano.sh/volcano", "v1.15.1", "installer/dockerfile/webhook-manager/gen-admission-secret.sh"
            ),
            ("kubectl",),
        )
    },
}
BACKOFF_START, BACKOFF_CAP = 10.0, 40.0  # the kubelet's 10 s doubling (capped at 5 min there; 40 s here)
_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def image_repository(image: str) -> tuple[str, str]:
    """`kserve/kserve-controller:v0.20.0` -> ("docker.io/kserve/kserve-controller", "v0.20.0")."""
    name, _, digest = image.partition("@")
    repo, tag = name, ""
    if ":" in name.rsplit("/", 1)[-1]:
        repo, tag = name.rsplit(":", 1)
    first = repo.split("/", 1)[0]
    if "/" not in repo:
        repo = f"docker.io/library/{repo}"
    elif "." not in first and ":" not in first and first != "localhost":
        repo = f"docker.io/{repo}"
    return repo, tag or digest


def binary_for(image: str) -> str | None:
    repo, tag = image_repository(image)
    return IMAGE_BINARIES.get(f"{repo}:{tag}") or IMAGE_BINARIES.get(repo)


def container_binary(container: dict[str, Any]) -> str | None:
    """The built binary a container runs: its image's program (IMAGE_BINARIES; a stand-in only in the containers
    STAND_IN_CONTAINERS names), or the binary of IMAGE_COMMANDS when the container runs one of the subcommands the
    rehearsal runs."""
    image = container.get("image", "")
    found = binary_for(image)
    repo, _ = image_repository(image)
    if found is not None:
        scope = STAND_IN_CONTAINERS.get(repo)
        return found if scope is None or container.get("name") in scope else None
    binary, subcommands = IMAGE_COMMANDS.get(repo, (None, frozenset()))
    argv = [*(container.get("command") or []), *(container.get("args") or [])]
    first = argv[1] if container.get("command") else (argv[0] if argv else "")
    return binary if len(argv) > 0 and first in subcommands else None


def _release(version: str) -> str:
    """v1.15.1 / 1.15.1 / 3.6.6-0 (an image tag's build suffix) -> 1.15.1."""
    return version.removeprefix("v").split("-", 1)[0]


def stand_in(container: dict[str, Any]) -> str | None:
    """When the built program is not the image's version (a stand-in the build declares), which it is."""
    binary = container_binary(container)
    if binary is None:
        return None
    built = str((cache.built_versions().get(binary) or {}).get("version", ""))
    _, tag = image_repository(container.get("image", ""))
    if not built or not tag or _release(built) == _release(tag):
        return None
    return f"{binary} {built} stands in for {container['image']}"


@functools.cache
def known_flags(binary: str) -> frozenset[str]:
    """The long flags a built program's --help lists."""
    done = subprocess.run(
        [str(cache.binary_path(binary)), "--help"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
    )
    return frozenset(re.findall(r"^\s+(?:-\w, )?--([\w.-]+)", done.stdout + done.stderr, re.M))


def unknown_flags(container: dict[str, Any]) -> list[str]:
    """The flags a stand-in program (not the image's version, `stand_in`) does not know: the chart of the pinned
    version passes them, the stand-in would refuse to start. It runs without them, and the report says so."""
    if stand_in(container) is None:
        return []
    binary = container_binary(container)
    assert binary is not None
    known = known_flags(binary)
    flags = [a.split("=", 1)[0] for a in (container.get("args") or []) if a.startswith("--")]
    return [f for f in flags if f.removeprefix("--") not in known]


def image_script(container: dict[str, Any]) -> tuple[str, Path] | None:
    """(path in the image, file at the pin) when the container's command is a script its image adds."""
    repo, _ = image_repository(container.get("image", ""))
    command = container.get("command") or []
    if not command:
        return None
    path = "/" + command[0].removeprefix("./").lstrip("/")
    found = IMAGE_SCRIPTS.get(repo, {}).get(path)
    return (path, found[0].directory) if found and found[0].directory.is_file() else None


def runnable(container: dict[str, Any]) -> str | None:
    """'binary' / 'script' when the rehearsal can run this container, else None."""
    image = container.get("image", "")
    if container.get("command") and container["command"][0].endswith(".sh"):
        script = image_script(container)
        repo, _ = image_repository(image)
        tools = next((t for p, (_, t) in IMAGE_SCRIPTS.get(repo, {}).items() if script and p == script[0]), None)
        if script is None or tools is None or not all(cache.binary_path(t).is_file() for t in tools):
            return None
        return "script"
    binary = container_binary(container)
    if binary is not None:
        return "binary" if cache.binary_path(binary).is_file() else None
    repo, _ = image_repository(image)
    tools = SCRIPT_IMAGES.get(repo)
    command = container.get("command") or []
    if tools is None or not command:
        return None
    has_shell, _fact = CATALOG_SCRIPT_IMAGES[repo]
    if not has_shell and command[0] in SHELLS:
        return "no-shell"
    return "script" if all(cache.binary_path(t).is_file() for t in tools) else None


def no_shell_message(container: dict[str, Any]) -> str:
    """The runtime's error for a shell the image does not have, with the catalog fact that says so."""
    repo, _ = image_repository(container.get("image", ""))
    _, fact = CATALOG_SCRIPT_IMAGES[repo]
    shell = container["command"][0]
    return (
        f'failed to create containerd task: exec: "{shell}": stat {shell}: no such file or directory: unknown '
        f"(catalog fact {fact.name}: {repo} has no shell)"
    )


def _expand(text: str, env: dict[str, str]) -> str:
    return _VAR.sub(lambda m: env.get(m.group(1), m.group(0)), text)


@dataclass
class ContainerState:
    spec: dict[str, Any]
    init: bool
    mode: str | None  # 'binary' | 'script' | None (played as kwok plays it)
    process: Process | None = None
    restarts: int = 0
    next_start: float = 0.0
    ready: bool = False
    exit_code: int | None = None
    message: str = ""
    probe_run: int = 0  # readiness probes in a row with the same result, the latest's sign: + success, - failure
    next_probe: float = 0.0

    @property
    def name(self) -> str:
        return self.spec["name"]


@dataclass
class Sandbox:
    uid: str
    namespace: str
    name: str
    ip: str
    directory: Path
    netns: str | None = None
    volumes_ready: bool = False
    containers: list[ContainerState] = field(default_factory=list)
    last_status: Any = None
    done: bool = False  # a Job's pod that ended
    job: bool = False


class Kubelet(ReconcileLoop):
    """The pods of one cluster the rehearsal runs (module docstring); `reconcile()` is one pass of its loop."""

    stop_seconds = 10.0

    def __init__(self, rehearsal: Rehearsal, target: Target):
        super().__init__("kubelet", target.name, label="kubelet")
        self.r, self.target, self.kube = rehearsal, target, target.kube
        self.sandboxes: dict[str, Sandbox] = {}
        self.skipped: set[str] = set()
        self.resolved: set[str] = set()  # pods whose Secrets and ConfigMaps exist: REFERENCES_CONDITION True
        self.blocked: dict[str, Blocked] = {}  # pod uid -> what it waits for, as last reported
        # Probes, like the kubelet's, do not verify certificates; here at start (test runners reset warning filters).
        warnings.filterwarnings("ignore", category=urllib3.exceptions.InsecureRequestWarning)
        self._next_dns = 0.0
        self._lock = threading.RLock()

    def stop(self) -> None:
        super().stop()
        with self._lock:
            for sandbox in list(self.sandboxes.values()):
                self._remove(sandbox)

    # -- the loop ---------------------------------------------------------------------------------------------
    def reconcile(self) -> None:
        with self._lock:
            pods = self.kube.list("v1", "Pod")
            self._gate(pods)
            seen = set()
            for pod in pods:
                uid = pod["metadata"]["uid"]
                seen.add(uid)
                if uid in self.skipped:
                    continue
                sandbox = self.sandboxes.get(uid)
                if sandbox is None:
                    sandbox = self._adopt(pod)
                    if sandbox is None:
                        continue
                if pod["metadata"].get("deletionTimestamp"):
                    if not self._job_still_running(sandbox):
                        self._remove(sandbox)
                    continue
                self._step(sandbox, pod)
            for uid in list(self.sandboxes):
                if uid not in seen and not self._job_still_running(self.sandboxes[uid]):
                    self._remove(self.sandboxes[uid])
            if self.sandboxes and time.monotonic() >= self._next_dns:
                names = self.r.dns(self.target.name)
                self._next_dns = time.monotonic() + 2.0
                for sandbox in self.sandboxes.values():
                    if (sandbox.directory / "root" / "etc").is_dir():
                        self._write_hosts(sandbox.directory / "root", names)

    def _gate(self, pods: list[dict[str, Any]]) -> None:
        """Each bound pod is let start (REFERENCES_CONDITION True, which kwok's pod-ready stage waits for) once every
        Secret and ConfigMap it needs exists, as a kubelet starts its containers (tools/rehearsal/references.py);
        until then the condition is False with the kubelet's reason and message, naming the missing object."""
        waiting = [
            pod
            for pod in pods
            if (pod.get("spec") or {}).get("nodeName")
            and not pod["metadata"].get("deletionTimestamp")
            and pod["metadata"]["uid"] not in self.resolved
        ]
        if not waiting:
            return
        keys: dict[tuple[str, str, str], set[str]] = {}
        for kind in ("Secret", "ConfigMap"):
            for obj in self.kube.list("v1", kind):
                meta = obj["metadata"]
                keys[(kind, meta["namespace"], meta["name"])] = {
                    *(obj.get("data") or {}),
                    *(obj.get("binaryData") or {}),
                }
        runtime_of_claim, fuse_ready = self._fluid_mounts(waiting, pods)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for pod in waiting:
            uid = pod["metadata"]["uid"]
            blocked = blocking_reference(
                pod, lambda kind, namespace, name: keys.get((kind, namespace, name))
            ) or fluid.fuse_blocker(pod, runtime_of_claim, fuse_ready)
            if blocked is not None and self.blocked.get(uid) == blocked:
                continue
            condition = {"type": REFERENCES_CONDITION, "status": "True", "lastTransitionTime": now}
            if blocked is not None:
                where = f"container {blocked.container}: " if blocked.container else ""
                condition |= {
                    "status": "False",
                    "reason": blocked.reason,
                    "message": f"{where}{blocked.message} (waits for {blocked.missing})",
                }
            try:
                self.kube.patch_status(
                    "v1",
                    "Pod",
                    pod["metadata"]["namespace"],
                    pod["metadata"]["name"],
                    {"status": {"conditions": [condition]}},
                )
            except ApiError:
                continue
            if blocked is None:
                self.resolved.add(uid)
                self.blocked.pop(uid, None)
            else:
                self.blocked[uid] = blocked

    def _fluid_mounts(
        self, waiting: list[dict[str, Any]], pods: list[dict[str, Any]]
    ) -> tuple[dict[tuple[str, str], tuple[str, str]], set[tuple[str, str, str]]]:
        """(namespace, claim) -> the Fluid runtime it reads through, and (runtime namespace, name, node) of each Ready
        FUSE pod: what fluid.fuse_blocker needs, asked of the cluster only when a waiting pod mounts a claim."""
        if not any("persistentVolumeClaim" in v for p in waiting for v in (p.get("spec") or {}).get("volumes") or []):
            return {}, set()
        runtimes = {
            v["metadata"]["name"]: found
            for v in self.kube.list("v1", "PersistentVolume")
            if (found := fluid.fluid_volume_runtime(v)) is not None
        }
        if not runtimes:
            return {}, set()
        claims = {
            (c["metadata"]["namespace"], c["metadata"]["name"]): runtimes[c["spec"]["volumeName"]]
            for c in self.kube.list("v1", "PersistentVolumeClaim")
            if (c.get("spec") or {}).get("volumeName") in runtimes
        }
        ready = {
            (p["metadata"]["namespace"], (p["metadata"].get("labels") or {}).get("release", ""), p["spec"]["nodeName"])
            for p in pods
            if (p["metadata"].get("labels") or {}).get("role") == "alluxio-fuse"
            and (p.get("spec") or {}).get("nodeName")
            and is_ready(p)
        }
        return claims, ready

    def _job_still_running(self, sandbox: Sandbox) -> bool:
        """kwok plays a Job's pod to completion at once (its pod-complete stage), and the Job's TTL may then delete
        the pod while the script the rehearsal runs for it is still at work: that process finishes first."""
        return sandbox.job and any(c.process is not None and c.process.running() for c in sandbox.containers)

    def _adopt(self, pod: dict[str, Any]) -> Sandbox | None:
        spec, status, meta = pod.get("spec") or {}, pod.get("status") or {}, pod["metadata"]
        if not spec.get("nodeName") or not status.get("podIP") or meta.get("deletionTimestamp"):
            return None  # not bound or not yet given an address by kwok: look again next pass
        containers = [ContainerState(c, True, runnable(c)) for c in spec.get("initContainers") or []]
        containers += [ContainerState(c, False, runnable(c)) for c in spec.get("containers") or []]
        owner_kinds = {o.get("kind") for o in meta.get("ownerReferences") or []}
        mains = [c for c in containers if not c.init and c.mode]
        cannot_start = any(c.mode == "no-shell" for c in containers)
        if not cannot_start and not any(c.mode == "binary" for c in mains) and not (mains and "Job" in owner_kinds):
            if "Job" in owner_kinds:
                self._complete(pod)
            self.skipped.add(meta["uid"])
            return None
        directory = self.target.directory / "pods" / f"{meta['namespace']}_{meta['name']}"
        sandbox = Sandbox(
            meta["uid"], meta["namespace"], meta["name"], status["podIP"], directory, containers=containers
        )
        self.sandboxes[sandbox.uid] = sandbox
        return sandbox

    def _complete(self, pod: dict[str, Any]) -> None:
        """A Job's pod the rehearsal does not run ends as kwok's pod-complete stage ends it (kwok@v0.8.0:
        kustomize/stage/pod/fast/pod-complete.yaml): every container terminated with exit code 0, Succeeded."""
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        statuses = [
            {
                "image": c.get("image", ""),
                "name": c["name"],
                "ready": False,
                "restartCount": 0,
                "started": False,
                "imageID": "",
                "state": {"terminated": {"exitCode": 0, "finishedAt": now, "reason": "Completed", "startedAt": now}},
            }
            for c in (pod.get("spec") or {}).get("containers") or []
        ]
        meta = pod["metadata"]
        with contextlib.suppress(ApiError):
            self.kube.patch_status(
                "v1",
                "Pod",
                meta["namespace"],
                meta["name"],
                {"status": {"containerStatuses": statuses, "phase": "Succeeded"}},
            )

    def _remove(self, sandbox: Sandbox) -> None:
        supervisor = self.r.supervisor
        for c in sandbox.containers:
            if c.process is not None and supervisor is not None:
                supervisor.stop(c.process)
        if sandbox.netns and self.r.network is not None:
            self.r.network.remove_sandbox(sandbox.netns)
        self.sandboxes.pop(sandbox.uid, None)

    def _step(self, sandbox: Sandbox, pod: dict[str, Any]) -> None:
        if sandbox.done:
            return
        if not sandbox.volumes_ready:
            missing = self._materialize(sandbox, pod)
            if missing:
                self._patch(sandbox, pod, waiting=f"FailedMount: {missing}")
                return
            sandbox.volumes_ready = True
        if sandbox.netns is None:
            assert self.r.network is not None
            sandbox.netns = self.r.network.sandbox(sandbox.uid[:8], sandbox.ip)
        inits = [c for c in sandbox.containers if c.init]
        for c in inits:
            if c.mode is None or c.exit_code == 0:
                continue
            self._run(sandbox, pod, c, restart_on_success=False)
            failed = f" failed ({c.restarts} restarts): {c.message}" if c.exit_code not in (None, 0) else ""
            self._patch(sandbox, pod, waiting=f"PodInitializing: init container {c.name}{failed}")
            return
        restart = (pod.get("spec") or {}).get("restartPolicy", "Always")
        mains = [c for c in sandbox.containers if not c.init and c.mode]
        for c in mains:
            self._run(sandbox, pod, c, restart_on_success=restart == "Always", restart_on_failure=restart != "Never")
            alive = c.process is not None and c.process.running() and c.process.entered()
            c.ready = alive and readiness(c, time.monotonic(), functools.partial(self._probe, sandbox, c))
            if not alive:
                c.probe_run = 0
        if restart != "Always" and all(c.exit_code is not None for c in mains):
            sandbox.done = True
            phase = "Succeeded" if all(c.exit_code == 0 for c in mains) else "Failed"
            self._patch(sandbox, pod, phase=phase)
            return
        self._patch(sandbox, pod)

    # -- containers -------------------------------------------------------------------------------------------
    def _run(
        self,
        sandbox: Sandbox,
        pod: dict[str, Any],
        c: ContainerState,
        *,
        restart_on_success: bool,
        restart_on_failure: bool = True,
    ) -> None:
        if c.process is not None and c.process.running():
            return
        if c.process is not None:  # it exited
            c.exit_code = c.process.popen.returncode
            c.message = _last_line(c.process.log)
            c.process = None
            if (c.exit_code == 0 and not restart_on_success) or (c.exit_code != 0 and not restart_on_failure):
                return
            c.restarts += 1
            c.next_start = time.monotonic() + min(BACKOFF_START * 2 ** (c.restarts - 1), BACKOFF_CAP)
        if time.monotonic() < c.next_start:
            return
        if c.exit_code == 0 and c.init:
            return
        c.process = self._start(sandbox, pod, c)

    def _start(self, sandbox: Sandbox, pod: dict[str, Any], c: ContainerState) -> Process:
        assert self.r.supervisor is not None and sandbox.netns is not None
        env = self._env(pod, c.spec)
        command = [_expand(a, env) for a in c.spec.get("command") or []]
        args = [_expand(a, env) for a in c.spec.get("args") or []]
        if c.mode == "binary":
            binary = f"/rehearsal/bin/{container_binary(c.spec)}"
            dropped = unknown_flags(c.spec)
            args = [a for a in args if a.split("=", 1)[0] not in dropped]
            argv = [binary, *command[1:], *args] if command else [binary, *args]
        elif c.mode == "no-shell":  # nothing runs: the runtime's error, as the kubelet reports it
            argv = ["/bin/sh", "-c", f"echo {shlex.quote(no_shell_message(c.spec))} >&2; exit {NO_SHELL_EXIT}"]
        else:
            argv = [*command, *args]
        root = sandbox.directory / "root"
        self._write_etc(root)
        script = ["set -e", f"R={shlex.quote(str(root))}"]
        for d in ("usr", "proc", "dev", "sys", "tmp", "etc/ssl", "rehearsal/bin", "var/run"):
            script.append(f'mkdir -p "$R/{d}"')
        for link, to in (("bin", "usr/bin"), ("sbin", "usr/sbin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")):
            script.append(f'[ -L "$R/{link}" ] || ln -s {to} "$R/{link}"')
        script += [
            'mount --rbind /usr "$R/usr"',
            'mount --rbind /dev "$R/dev"',
            'mount -t proc proc "$R/proc"',
            'mount --rbind /sys "$R/sys"',
            'mount --bind /etc/ssl "$R/etc/ssl"',
            f'mount --bind {shlex.quote(str(cache.bin_dir()))} "$R/rehearsal/bin"',
        ]
        for mount in c.spec.get("volumeMounts") or []:
            source = sandbox.directory / "volumes" / mount["name"]
            if mount.get("subPath"):
                source = source / mount["subPath"]
            target = "$R" + shlex.quote(mount["mountPath"]).replace("'", "")
            if source.is_dir():
                script.append(f'mkdir -p "{target}"')
            else:
                script.append(f'mkdir -p "$(dirname "{target}")"; touch "{target}"')
            script.append(f'mount --bind {shlex.quote(str(source))} "{target}"')
        script_file = image_script(c.spec)
        if script_file is not None:
            script.append(
                f'touch "$R{script_file[0]}"; mount --bind {shlex.quote(str(script_file[1]))} "$R{script_file[0]}"'
            )
            argv = ["/bin/bash", script_file[0], *argv[1:]]
        workdir = c.spec.get("workingDir") or "/"
        script.append(
            f'exec chroot "$R" /usr/bin/env -C {shlex.quote(workdir)} {" ".join(shlex.quote(a) for a in argv)}'
        )
        full_env = {**env, "PATH": "/rehearsal/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
        return self.r.supervisor.start(
            f"{self.target.name}/{sandbox.namespace}/{sandbox.name}/{c.name}",
            [
                "ip",
                "netns",
                "exec",
                sandbox.netns,
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "/bin/sh",
                "-c",
                "\n".join(script),
            ],
            env=full_env,
        )

    def _env(self, pod: dict[str, Any], container: dict[str, Any]) -> dict[str, str]:
        meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
        host, port = self.target.plane.server.removeprefix("https://").rsplit(":", 1)
        env: dict[str, str] = {
            "KUBERNETES_SERVICE_HOST": host,
            "KUBERNETES_SERVICE_PORT": port,
            "HOSTNAME": meta["name"],
        }
        if spec.get("enableServiceLinks", True):
            env |= self.r.service_links(self.target, meta["namespace"])
        for source in container.get("envFrom") or []:
            prefix = source.get("prefix", "")
            ref = source.get("configMapRef") or source.get("secretRef") or {}
            data = self._data(
                "Secret" if "secretRef" in source else "ConfigMap", meta["namespace"], ref.get("name", "")
            )
            env |= {f"{prefix}{k}": v for k, v in (data or {}).items()}
        fields = {
            "metadata.name": meta["name"],
            "metadata.namespace": meta["namespace"],
            "metadata.uid": meta["uid"],
            "spec.nodeName": spec.get("nodeName", ""),
            "spec.serviceAccountName": spec.get("serviceAccountName", "default"),
            "status.podIP": status.get("podIP", ""),
            "status.hostIP": status.get("hostIP", ""),
        }
        for item in container.get("env") or []:
            if "value" in item:
                env[item["name"]] = _expand(str(item["value"]), env)
                continue
            source = item.get("valueFrom") or {}
            if "fieldRef" in source:
                path = source["fieldRef"]["fieldPath"]
                label = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
                env[item["name"]] = (
                    (meta.get(label.group(1)) or {}).get(label.group(2), "") if label else fields.get(path, "")
                )
            elif "secretKeyRef" in source or "configMapKeyRef" in source:
                ref = source.get("secretKeyRef") or source.get("configMapKeyRef") or {}
                data = self._data("Secret" if "secretKeyRef" in source else "ConfigMap", meta["namespace"], ref["name"])
                if data is not None and ref["key"] in data:  # else optional: the kubelet sets nothing (_gate)
                    env[item["name"]] = data[ref["key"]]
            elif "resourceFieldRef" in source:
                resource = source["resourceFieldRef"]["resource"].split(".", 1)
                value = ((container.get("resources") or {}).get(resource[0]) or {}).get(resource[1], "0")
                env[item["name"]] = str(value)
        return env

    def _data(self, kind: str, namespace: str, name: str) -> dict[str, str] | None:
        obj = self.kube.get("v1", kind, name, namespace)
        if obj is None:
            return None
        if kind == "Secret":
            return {k: base64.b64decode(v).decode(errors="replace") for k, v in (obj.get("data") or {}).items()}
        return dict(obj.get("data") or {})

    def _write_etc(self, root: Path) -> None:
        etc = root / "etc"
        etc.mkdir(parents=True, exist_ok=True)
        for name in ("passwd", "group", "nsswitch.conf", "resolv.conf"):
            with contextlib.suppress(OSError):
                (etc / name).write_text(Path("/etc", name).read_text())
        self._write_hosts(root, self.r.dns(self.target.name))

    @staticmethod
    def _write_hosts(root: Path, names: dict[str, str]) -> None:
        """Rewritten in place as names change: cluster DNS answers at lookup time, so a peer that gets its address
        after this pod started (a StatefulSet's other members) resolves on the next lookup."""
        text = "127.0.0.1 localhost\n" + "".join(f"{ip} {name}\n" for name, ip in sorted(names.items()))
        hosts = root / "etc" / "hosts"
        if not hosts.exists() or hosts.read_text() != text:
            with hosts.open("r+" if hosts.exists() else "w") as handle:  # the same inode: it is bind-mounted
                handle.seek(0)
                handle.write(text)
                handle.truncate()

    # -- volumes ----------------------------------------------------------------------------------------------
    def _materialize(self, sandbox: Sandbox, pod: dict[str, Any]) -> str:
        """Every volume of the pod on disk; the first one that cannot be yet (its Secret is missing), else ""."""
        meta, spec = pod["metadata"], pod.get("spec") or {}
        for volume in spec.get("volumes") or []:
            directory = sandbox.directory / "volumes" / volume["name"]
            directory.mkdir(parents=True, exist_ok=True)
            if "secret" in volume or "configMap" in volume:
                source = volume.get("secret") or volume.get("configMap")
                kind = "Secret" if "secret" in volume else "ConfigMap"
                name = source.get("secretName") or source.get("name")
                data = self._data(kind, meta["namespace"], name)
                if data is None:
                    if source.get("optional"):
                        continue
                    return f"{kind.lower()} {meta['namespace']}/{name} not found"
                _write_items(directory, data, source.get("items"))
            elif "projected" in volume:
                for part in volume["projected"].get("sources") or []:
                    if "serviceAccountToken" in part:
                        token = part["serviceAccountToken"]
                        value = self._token(pod, token.get("audience"), token.get("expirationSeconds", 3607))
                        (directory / token["path"]).write_text(value)
                    elif "configMap" in part or "secret" in part:
                        kind = "Secret" if "secret" in part else "ConfigMap"
                        source = part.get("secret") or part.get("configMap")
                        data = self._data(kind, meta["namespace"], source["name"])
                        if data is None:
                            if source.get("optional"):
                                continue
                            return f"{kind.lower()} {meta['namespace']}/{source['name']} not found"
                        _write_items(directory, data, source.get("items"))
                    elif "downwardAPI" in part:
                        _write_downward(directory, pod, part["downwardAPI"].get("items") or [])
            elif "downwardAPI" in volume:
                _write_downward(directory, pod, volume["downwardAPI"].get("items") or [])
        return ""

    def _token(self, pod: dict[str, Any], audience: str | None, seconds: int) -> str:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        body: dict[str, Any] = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {
                "expirationSeconds": max(int(seconds), 3600),
                "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]},
            },
        }
        if audience:
            body["spec"]["audiences"] = [audience]
        sa = spec.get("serviceAccountName") or "default"
        path = f"/api/v1/namespaces/{meta['namespace']}/serviceaccounts/{sa}/token"
        return self.kube.post(path, body)["status"]["token"]

    # -- probes and status ------------------------------------------------------------------------------------
    def _probe(self, sandbox: Sandbox, c: ContainerState) -> bool:
        probe = c.spec.get("readinessProbe")
        if not probe:
            return True
        ports = {p.get("name"): p.get("containerPort") for p in c.spec.get("ports") or []}
        try:
            if "httpGet" in probe:
                get = probe["httpGet"]
                port = ports.get(get["port"], get["port"]) if isinstance(get["port"], str) else get["port"]
                scheme = get.get("scheme", "HTTP").lower()
                url = f"{scheme}://{get.get('host') or sandbox.ip}:{port}{get.get('path', '/')}"
                response = requests.get(url, timeout=1, verify=False)  # the kubelet does not verify either
                return 200 <= response.status_code < 400
            if "tcpSocket" in probe or "grpc" in probe:
                spec = probe.get("tcpSocket") or probe.get("grpc")
                port = ports.get(spec["port"], spec["port"]) if isinstance(spec["port"], str) else spec["port"]
                with socket.create_connection((sandbox.ip, int(port)), timeout=1):
                    return True
        except (OSError, requests.RequestException):
            return False
        return True  # exec probes: ready while running

    def _patch(self, sandbox: Sandbox, pod: dict[str, Any], *, waiting: str = "", phase: str | None = None) -> None:
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        statuses = []
        for c in sandbox.containers:
            if c.init:
                continue
            if c.mode is None:  # played as kwok plays it
                statuses.append(
                    {
                        "name": c.name,
                        "ready": True,
                        "restartCount": 0,
                        "image": c.spec.get("image", ""),
                        "imageID": "",
                        "state": {"running": {"startedAt": now}},
                    }
                )
                continue
            running = c.process is not None and c.process.running()
            if running:
                state: dict[str, Any] = {"running": {"startedAt": now}}
            elif c.exit_code is not None and phase:
                state = {
                    "terminated": {"exitCode": c.exit_code, "reason": "Completed" if c.exit_code == 0 else "Error"}
                }
            elif c.exit_code is not None:
                state = {"waiting": {"reason": "CrashLoopBackOff", "message": c.message[:200]}}
            else:
                state = {"waiting": {"reason": waiting.split(":", 1)[0] or "ContainerCreating", "message": waiting}}
            statuses.append(
                {
                    "name": c.name,
                    "ready": c.ready,
                    "restartCount": c.restarts,
                    "image": c.spec.get("image", ""),
                    "imageID": "",
                    "started": running,
                    "state": state,
                }
            )
        ready = not waiting and phase is None and all(s["ready"] for s in statuses)
        flag = "True" if ready else "False"
        summary = (
            flag,
            phase,
            waiting,
            tuple((s["name"], s["ready"], s["restartCount"], next(iter(s["state"]))) for s in statuses),
        )
        if summary == sandbox.last_status:
            return
        sandbox.last_status = summary
        body: dict[str, Any] = {
            "status": {
                "conditions": [
                    {"type": "Ready", "status": flag, "lastTransitionTime": now},
                    {"type": "ContainersReady", "status": flag, "lastTransitionTime": now},
                ],
                "containerStatuses": statuses,
            }
        }
        if phase:
            body["status"]["phase"] = phase
        with contextlib.suppress(ApiError):
            self.kube.patch_status("v1", "Pod", sandbox.namespace, sandbox.name, body)


def readiness(c: ContainerState, now: float, probe: Callable[[], bool]) -> bool:
    """A running container's readiness as the kubelet's prober keeps it (KUBELET_READINESS_PROBE_CADENCE): it changes
    after successThreshold successes or failureThreshold failures in a row, and a ready container is probed each
    periodSeconds. Until it is first ready the rehearsal probes it each pass (a second), where the kubelet waits
    initialDelaySeconds, then periodSeconds: its pods come up sooner, never later."""
    spec = c.spec.get("readinessProbe")
    if not spec:
        return True
    if c.ready and now < c.next_probe:
        return True
    succeeded = probe()
    c.next_probe = now + spec.get("periodSeconds", 10)
    if succeeded:
        c.probe_run = max(c.probe_run, 0) + 1
        return c.ready or c.probe_run >= spec.get("successThreshold", 1)
    c.probe_run = min(c.probe_run, 0) - 1
    return c.ready and -c.probe_run < spec.get("failureThreshold", 3)


def _write_items(directory: Path, data: dict[str, str], items: list[dict[str, Any]] | None) -> None:
    pairs = [(i["key"], i.get("path", i["key"])) for i in items] if items else [(k, k) for k in data]
    for key, rel in pairs:
        if key in data:
            path = directory / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(data[key])


def _write_downward(directory: Path, pod: dict[str, Any], items: list[dict[str, Any]]) -> None:
    meta = pod["metadata"]
    for item in items:
        path = (item.get("fieldRef") or {}).get("fieldPath", "")
        if path == "metadata.namespace":
            value = meta["namespace"]
        elif path == "metadata.name":
            value = meta["name"]
        elif path in ("metadata.labels", "metadata.annotations"):
            value = "\n".join(f'{k}="{v}"' for k, v in sorted((meta.get(path.split(".")[1]) or {}).items()))
        else:
            value = ""
        (directory / item["path"]).write_text(value)


def _last_line(log: Path) -> str:
    with contextlib.suppress(OSError):
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
        return lines[-1] if lines else ""
    return ""
