"""Replay an environment's rollout on local control planes: wave by wave, stack by stack, every resource of the
plan in the order `pulumi up` can reach it, then the wave's gates.

Order within a stack: Pulumi starts a resource once everything it depends on (`dependsOn`, the resources its
inputs come from; a component stands for all its children) is done, in parallel. Helm releases that wait take
minutes, plain objects seconds: so every plain object that is ready goes before any release, and a release
completes (CRDs installed, controllers started, waited for) before the next resource that is ready after it.
A resource whose dependency failed is not attempted (Pulumi does not either). Cloud resources (VPCs, IAM, node
groups) are taken as created: the rehearsal's clusters and kwok nodes stand for them."""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.config.rollout import Wave, rollout_waves
from components.config.stacks import StackSlice, environment_stacks
from components.k8s.names import cluster_name
from tools.plan.engine import PlannedResource
from tools.plan.model import HELM_RELEASE, K8S_PROVIDER, Plan, is_kubernetes_object, is_patch
from tools.rehearsal import cache, cloud, helm, kwok, nodes, pulumi_k8s
from tools.rehearsal.charts import CLOUD_CRDS, CONFIG_FILES, VENDORED, ModuleFiles, load_all, load_files
from tools.rehearsal.cluster import ControlPlane, start_cluster
from tools.rehearsal.kube import ApiError, Kube
from tools.rehearsal.network import NetworkError, PodNetwork
from tools.rehearsal.processes import ProcessFailed, Supervisor, wait_until
from tools.rehearsal.report import Check, Report
from tools.rollout.ci import stack_regions

CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
KUBE_VERSION = "v1.33.13"  # the clusters' Kubernetes (tools/rehearsal/modules/kubernetes)
DEFAULT_SERVICE_CIDR = "10.100.0.0/16"
CRD_ESTABLISHED_SECONDS = 30.0


@dataclass
class Target:
    """One rehearsal cluster, named as the plan's Kubernetes provider for it is."""

    name: str
    plane: ControlPlane
    kube: Kube
    region: RegionSpec | None
    index: int
    controllers: list[Any] = field(default_factory=list)

    @property
    def directory(self) -> Path:
        return self.plane.directory


class Rehearsal:
    def __init__(self, env_name: str, *, plan: Plan, out_dir: Path, console: Console):
        self.env_name = env_name
        self.plan = plan
        self.env: EnvironmentSpec = plan.spec
        self.out_dir = out_dir
        self.work = out_dir / "rehearsal"
        self.console = console
        self.report = Report(env_name, console)
        self.targets: dict[str, Target] = {}
        self.supervisor: Supervisor | None = None
        self.network: PodNetwork | None = None

    # -- the run ----------------------------------------------------------------------------------------------
    def run(self) -> int:
        if self.work.exists():
            shutil.rmtree(self.work)
        self.work.mkdir(parents=True)
        self.report.binaries = {name: str(info.get("version", "?")) for name, info in cache.built_versions().items()}
        waves = rollout_waves(self.env, self.env_name)
        slices = {s.name: s for s in environment_stacks(self.env, self.env_name)}
        try:
            self.network = PodNetwork.create()
            with Supervisor(self.work / "logs") as supervisor:
                self.supervisor = supervisor
                for wave in waves:
                    self.console.rule(f"wave {wave.name}: {', '.join(wave.stacks)}")
                    failed_before = len(self.report.failed)
                    for stack in wave.stacks:
                        self._stack(wave, slices[stack])
                    if len(self.report.failed) > failed_before and self.report.stopped_at is None:
                        self.report.stopped_at = wave.name
                self._stop_controllers()
        except (ProcessFailed, NetworkError) as exc:
            self.report.add(Check("control plane", "apply", False, str(exc), "-", self.env_name))
        finally:
            self._stop_controllers()
            if self.network is not None:
                self.network.close()
            self.report.write(self.out_dir / "rehearsal.json")
        self.console.print(self.report.summary_table())
        failed = self.report.failed
        if failed:
            self.console.print(
                f"[red]rehearsal of {self.env_name}: {len(failed)} check(s) failed[/]"
                + (f"; `make rollout` would stop in wave {self.report.stopped_at}" if self.report.stopped_at else "")
            )
            return 1
        self.console.print(f"[green]rehearsal of {self.env_name}: every check passed[/]")
        return 0

    def _stop_controllers(self) -> None:
        for target in self.targets.values():
            for controller in target.controllers:
                controller.stop()
            target.controllers.clear()

    # -- clusters ---------------------------------------------------------------------------------------------
    def _start_region(self, region: RegionSpec) -> Target:
        name = cluster_name(self.env_name, region)
        if name in self.targets:
            return self.targets[name]
        assert self.supervisor is not None and self.network is not None
        network = self.network
        started = time.monotonic()
        index = sum(1 for t in self.targets.values() if t.region is not None)
        with self.console.status(f"{name}: starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler"):
            plane = start_cluster(
                self.supervisor,
                name=name,
                directory=self.work / name,
                service_cidr=str(region.network.services_cidr or DEFAULT_SERVICE_CIDR),
                gke=region.cloud == "gcp",
                host=network.host_ip,
            )
        admin_cert = plane.admin.write(plane.pki, "admin")
        kube = Kube(plane.server, plane.pki / "ca.crt", cert=admin_cert)
        target = Target(name, plane, kube, region, index)
        self.targets[name] = target
        for obj in cloud.cloud_objects(region.cloud):
            kube.create(obj, field_manager=cloud.STAND_IN_MANAGER)
        if region.cloud == "gcp" and self._multi_networking(name):
            self._install_files(target, CLOUD_CRDS["gke-multi-networking"])
        controllers = cloud.CloudControllers(kube, cloud=region.cloud, region=region.region, cluster=name)
        controllers.start()
        target.controllers.append(controllers)
        kwok.start_kwok(self.supervisor, cluster=name, kubeconfig=plane.admin_kubeconfig, node_ip=network.host_ip)
        count = 0
        for node in nodes.region_nodes(
            self.plan, self.env, self.env_name, region, lambda n: network.node_cidr(index, n)
        ):
            kube.create(node, field_manager="rehearsal-nodes")
            count += 1
        wait_until(
            f"{name}: {count} kwok nodes Ready",
            lambda: sum(_ready(n) for n in kube.list("v1", "Node")) >= count,
            timeout=120,
        )
        self.report.clusters[name] = {
            "server": plane.server,
            "nodes": count,
            "cloud": region.cloud,
            "startSeconds": round(time.monotonic() - started, 1),
        }
        self.console.print(f"  {name}: control plane up, {count} kwok nodes Ready ({time.monotonic() - started:.0f} s)")
        return target

    def _multi_networking(self, cluster: str) -> bool:
        return any(
            r.type == "gcp:container/cluster:Cluster"
            and r.inputs.get("name") == cluster
            and r.inputs.get("enableMultiNetworking")
            for r in self.plan.resources
        )

    def _install_files(self, target: Target, files: ModuleFiles) -> list[str]:
        missing = files.missing()
        if missing:
            raise FileNotFoundError(missing)
        created = []
        for doc in load_files(files.directory):
            target.kube.create(doc, field_manager=helm.HELM_FIELD_MANAGER)
            created.append(doc["metadata"]["name"])
        return created

    # -- stacks -----------------------------------------------------------------------------------------------
    def _stack(self, wave: Wave, stack: StackSlice) -> None:
        stack_plan = self.plan.stacks.get(stack.name, self.plan)
        for region in stack_regions(self.env, stack):
            self._start_region(self.env.region(region))
        self.console.print(f"[bold]{stack.name}[/]: {len(stack_plan.resources)} resources")
        StackRun(self, wave, stack.name, stack_plan).run()

    def check(self, check: Check) -> Check:
        return self.report.add(check)

    kube_version = KUBE_VERSION

    def install_release(self, run: StackRun, resource: PlannedResource) -> bool:
        from tools.rehearsal.releases import install_release

        return install_release(run, resource)

    def start_controllers(self, run: StackRun, target: Target, resource: PlannedResource, rendered: Any) -> None:
        """The release's controllers as local processes (where the rehearsal runs them)."""

    def served_services(
        self, run: StackRun, target: Target, resource: PlannedResource, rendered: Any
    ) -> set[tuple[str, str]]:
        """(namespace, Service) of the release that a process of the rehearsal will serve."""
        return set()

    def pending_reason(self, target: Target, namespace: str, selector: str) -> str:
        return pending_reason(target.kube, namespace, selector)


def _ready(node: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (node.get("status") or {}).get("conditions") or []
    )


class StackRun:
    """One stack's resources in the order `pulumi up` reaches them (module docstring)."""

    def __init__(self, rehearsal: Rehearsal, wave: Wave, stack: str, plan: Plan):
        self.r, self.wave, self.stack, self.plan = rehearsal, wave, stack, plan
        self.outcome: dict[str, bool] = {}
        self.awaiting: dict[str, Awaiting] = {}
        self.release_namespace = "default"

    def deps(self, resource: PlannedResource) -> set[str]:
        direct = set(resource.options.get("dependsOn") or ())
        direct |= {u for urns in resource.property_dependencies.values() for u in urns}
        expanded: set[str] = set()
        for urn in direct:
            dep = self.plan.by_urn.get(urn)
            if dep is None:
                continue
            if _executable(dep):
                expanded.add(urn)
            else:  # a component: all of its resources
                expanded |= {d.urn for d in self.plan.descendants(urn) if _executable(d)}
        return expanded

    def run(self) -> None:
        """Resources in Pulumi's order (module docstring); awaits run beside everything else, as in Pulumi."""
        pending = [r for r in self.plan.resources if _executable(r)]
        deps = {r.urn: self.deps(r) for r in pending}
        while pending or self.awaiting:
            ready = [r for r in pending if deps[r.urn] <= self.outcome.keys()]
            quick = [r for r in ready if r.type != HELM_RELEASE]
            if quick:
                for resource in quick:
                    pending.remove(resource)
                    self._start(resource, deps[resource.urn])
                continue
            if self.awaiting:
                if not self._poll_awaiting():
                    time.sleep(1.0)
                continue
            if not ready:
                for r in pending:
                    self.outcome[r.urn] = False
                    self.r.check(self._check(r, "apply", False, "never reached: a dependency cycle"))
                return
            pending.remove(ready[0])
            self._start(ready[0], deps[ready[0].urn])
            for waiting in self.awaiting.values():  # the release took its time: each await gets a fresh look
                waiting.deadline = max(waiting.deadline, time.monotonic() + 5)

    def _start(self, resource: PlannedResource, deps: set[str]) -> None:
        failed = sorted(u for u in deps if not self.outcome[u])
        if failed:
            self.outcome[resource.urn] = False
            if self._reported(resource):
                names = ", ".join(self.plan.by_urn[u].name for u in failed[:3])
                self.r.check(
                    self._check(resource, "apply", None, f"not attempted: it depends on {names}, which failed")
                )
            return
        result = self.execute(resource)
        if result is not None:
            self.outcome[resource.urn] = result

    def _poll_awaiting(self) -> bool:
        """One look at every awaited object; True when one of them finished."""
        finished = False
        for urn, waiting in list(self.awaiting.items()):
            ok, seen = pulumi_k8s.probe_ready(waiting.target.kube, waiting.obj)
            expired = time.monotonic() >= waiting.deadline
            if not ok and not expired:
                continue
            detail = (
                f"created; {seen}"
                if ok
                else "created; "
                + pulumi_k8s.not_ready(
                    waiting.obj,
                    seen,
                    pulumi_k8s.AWAIT_SECONDS,
                    lambda ns, sel, t=waiting.target: self.r.pending_reason(t, ns, sel),
                )
            )
            check = self._check(waiting.resource, "apply", ok, detail)
            check.seconds = round(time.monotonic() - waiting.started, 1)
            self.r.check(check)
            self.outcome[urn] = ok
            del self.awaiting[urn]
            finished = True
        return finished

    @staticmethod
    def _reported(resource: PlannedResource) -> bool:
        return is_kubernetes_object(resource) or resource.type in (HELM_RELEASE, CONFIG_FILE)

    def _check(
        self, resource: PlannedResource, category: str, ok: bool | None, detail: str, name: str | None = None
    ) -> Check:
        cluster = self.plan.cluster_of(resource)
        obj = pulumi_k8s.describe(resource.inputs) if is_kubernetes_object(resource) else None
        return Check(
            name or obj or f"{resource.type.split(':')[-1]} {resource.name}",
            category,  # type: ignore[arg-type]
            ok,
            detail,
            self.wave.name,
            self.stack,
            cluster=cluster,
            object=obj,
        )

    def target(self, resource: PlannedResource) -> Target | None:
        return self.r.targets.get(self.plan.cluster_of(resource) or "")

    def execute(self, resource: PlannedResource) -> bool | None:
        """True / False when done; None when created and awaited (finished by _poll_awaiting)."""
        if resource.type == K8S_PROVIDER:
            return True
        if resource.type == HELM_RELEASE:
            return self.r.install_release(self, resource)
        if resource.type == CONFIG_FILE:
            return self._config_file(resource)
        if not is_kubernetes_object(resource):
            return True  # a cloud, tls or random resource: the rehearsal's clusters and key material stand for it
        target = self.target(resource)
        if target is None:
            cluster = self.plan.cluster_of(resource)
            self.r.check(
                self._check(
                    resource,
                    "apply",
                    False,
                    f"cluster {cluster} is not up: nothing creates its API server before this object",
                )
            )
            return False
        started = time.monotonic()
        obj = _plain(resource.inputs)
        outcome = pulumi_k8s.create_or_patch(target.kube, obj, urn=resource.urn, patch=is_patch(resource))
        if outcome.ok and not is_patch(resource) and pulumi_k8s.awaited(obj):
            self.awaiting[resource.urn] = Awaiting(resource, target, obj, started, started + pulumi_k8s.AWAIT_SECONDS)
            return None
        check = self._check(resource, "apply", outcome.ok, outcome.detail)
        check.seconds = round(time.monotonic() - started, 1)
        self.r.check(check)
        return outcome.ok

    def _config_file(self, resource: PlannedResource) -> bool:
        url = resource.inputs.get("file", "")
        files = CONFIG_FILES.get(url)
        target = self.target(resource)
        if files is None or target is None:
            detail = f"no module source for {url}" if files is None else "its cluster is not up"
            self.r.check(self._check(resource, "apply", False, detail))
            return False
        ok = True
        for doc in load_files(files.directory):
            outcome = pulumi_k8s.create_or_patch(
                target.kube, doc, urn=f"{resource.urn}/{doc['metadata']['name']}", patch=False
            )
            ok &= outcome.ok
            self.r.check(
                Check(
                    pulumi_k8s.describe(doc),
                    "apply",
                    outcome.ok,
                    f"{outcome.detail} (ConfigFile {resource.name}: {files.source})",
                    self.wave.name,
                    self.stack,
                    cluster=target.name,
                    object=pulumi_k8s.describe(doc),
                )
            )
        return ok


@dataclass
class Awaiting:
    """A created object the provider waits for before its dependents start."""

    resource: PlannedResource
    target: Target
    obj: dict[str, Any]
    started: float
    deadline: float


def _executable(resource: PlannedResource) -> bool:
    """A resource the engine creates: custom ones, and the provider's multi-language components (a ConfigFile's
    objects come from the provider, not from registered children)."""
    return resource.custom or resource.type == CONFIG_FILE


def _plain(value: Any) -> Any:
    """Inputs as the provider sends them: Pulumi assets (none in manifests) and None-valued keys dropped."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def pending_reason(kube: Kube, namespace: str, selector: str) -> str:
    """Why the pods a selector picks are not ready: the scheduler's or kwok's last word on each."""
    with contextlib.suppress(ApiError):
        pods = kube.list("v1", "Pod", namespace, selector=selector)
        if not pods:
            return "no pods (their controller did not create any)"
        reasons = []
        for pod in pods[:3]:
            status = pod.get("status") or {}
            for c in status.get("conditions") or []:
                if c.get("type") == "PodScheduled" and c.get("status") != "True":
                    reasons.append(f"pod {pod['metadata']['name']} unschedulable: {c.get('message', '')}")
                    break
            else:
                reasons.append(f"pod {pod['metadata']['name']} {status.get('phase', 'Pending')}")
        return "; ".join(reasons)
    return ""


def wait_crds_established(kube: Kube, names: list[str], timeout: float = CRD_ESTABLISHED_SECONDS) -> None:
    def established() -> bool:
        for name in names:
            crd = kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)
            conditions = (crd or {}).get("status", {}).get("conditions") or []
            if not any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
                return False
        return True

    wait_until(f"CRDs established: {', '.join(names[:3])}…", established, timeout=timeout)


def vendored_crds(paths: tuple[str, ...]) -> list[dict[str, Any]]:
    return [doc for rel in paths for doc in load_all((VENDORED / rel).read_text())]


Installer = Callable[[StackRun, PlannedResource], bool]
