"""Replay an environment's rollout on local control planes: wave by wave, stack by stack, every resource of the
plan in the order `pulumi up` can reach it, then the wave's gates.

Order within a stack: Pulumi starts a resource once everything it depends on (`dependsOn`, the resources its
inputs come from; a component stands for all its children) is done, in parallel. Plain objects take seconds, Helm
releases minutes: every plain object that is ready goes first; then each ready release is installed (rendered, its
CRDs and objects created, its controllers started) after one look at what is being waited for, and Helm's wait for
its objects (ReleaseWait) is looked at beside the stack's other awaits and releases, once a second: releases that do
not depend on each other wait side by side, and what depends on one starts when that one is done.
A resource whose dependency failed is not attempted (Pulumi does not either). Cloud resources (VPCs, IAM, node
groups) are taken as created: the rehearsal's clusters and kwok nodes stand for them."""

from __future__ import annotations

import contextlib
import ipaddress
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from resource import RUSAGE_CHILDREN, RUSAGE_SELF, getrusage
from typing import Any

from rich.console import Console

from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.config.stacks import StackSlice
from components.domain.stack_split import environment_stacks
from components.domain.waves import Wave, rollout_waves
from components.federation.member import api_endpoint
from components.k8s.names import cluster_name
from tools.plan.engine import PlannedResource
from tools.plan.mocks import read_namespace_uid
from tools.plan.model import HELM_RELEASE, K8S_PROVIDER, Plan, is_kubernetes_object, is_patch
from tools.rehearsal import cache, cloud, fluid, helm, kwok, nodes, pulumi_k8s
from tools.rehearsal.certmanager import INJECTABLE, CertManagerStandIn
from tools.rehearsal.charts import (
    CLOUD_CRDS,
    VENDORED,
    VENDORED_CONFIG_FILES,
    ModuleFiles,
    load_all,
    load_files,
)
from tools.rehearsal.cluster import ControlPlane, start_cluster
from tools.rehearsal.daemons import check_node_daemons
from tools.rehearsal.fluid import FluidStandIn
from tools.rehearsal.gates import run_gates
from tools.rehearsal.gateway import check_gateways
from tools.rehearsal.karmada_checks import check_members, check_propagation
from tools.rehearsal.karmada_push import live_push_values
from tools.rehearsal.keda import KedaStandIn
from tools.rehearsal.kube import WATCHED, ApiError, Kube, is_ready
from tools.rehearsal.kubelet import Kubelet
from tools.rehearsal.network import NODES_PER_CLUSTER, NetworkError, PodNetwork
from tools.rehearsal.processes import ProcessFailed, ReconcileLoop, Supervisor, wait_until
from tools.rehearsal.proxy import ServiceProxy
from tools.rehearsal.releases import ReleaseWait, served_by_programs, unserved
from tools.rehearsal.report import Check, Limit, Report
from tools.rehearsal.serving import check_pickers, check_scheduled
from tools.rollout.ci import stack_regions

CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
KUBE_VERSION = "v1.33.13"  # the clusters' Kubernetes (tools/rehearsal/modules/kubernetes)
DEFAULT_SERVICE_CIDR = "10.100.0.0/16"
# Helm waits 60 s for a chart's crds/ to be ready before its templates (helm.sh/helm/v3@v3.20.2:pkg/action/
# install.go L185); the rehearsal gives its API servers, on a loaded machine, twice that to build the OpenAPI of
# KServe's megabyte CRDs.
CRD_ESTABLISHED_SECONDS = 120.0
DNS_TTL_SECONDS = 2.0  # how stale a pod's view of Service and pod names may be (a kubelet refreshes it as often)


@dataclass
class Target:
    """One rehearsal cluster, named as the plan's Kubernetes provider for it is."""

    name: str
    plane: ControlPlane
    kube: Kube
    region: RegionSpec | None
    index: int
    controllers: list[Any] = field(default_factory=list)
    kubelet: Kubelet | None = None

    server_name: str | None = None  # the name its certificate is verified for, when reached by address

    @property
    def directory(self) -> Path:
        return self.plane.directory

    def kubeconfig(self) -> dict[str, Any]:
        """A kubeconfig as the rollout's probe reads it: the rehearsal's admin (or the program's own, for a
        cluster reached through the plan's provider)."""
        import yaml

        config = yaml.safe_load(self.plane.admin_kubeconfig.read_text())
        if self.server_name:
            config["clusters"][0]["cluster"]["tls-server-name"] = self.server_name
        return config


class Rehearsal:
    def __init__(self, env_name: str, *, plan: Plan, out_dir: Path, console: Console, until_wave: str | None = None):
        self.env_name = env_name
        self.plan = plan
        self.env: EnvironmentSpec = plan.spec
        self.out_dir = out_dir
        self.work = out_dir / "rehearsal"
        self.console = console
        self.report = Report(env_name, console)
        self.until_wave = until_wave  # the last wave rehearsed (the rollout up to there); None: every wave
        self.targets: dict[str, Target] = {}
        self.supervisor: Supervisor | None = None
        self.network: PodNetwork | None = None
        self.proxy: ServiceProxy | None = None
        self.unreachable: dict[str, float] = {}  # provider clusters that did not answer, until when not to retry
        self.slices: dict[str, StackSlice] = {s.name: s for s in environment_stacks(self.env, env_name)}
        self._metrics_tokens: dict[str, str] = {}
        self.reads: dict[str, str] = {}  # a read's mock value -> the live cluster's (_resolve_reads)
        self._dns_lock = threading.Lock()
        # wave -> (stack, picker Deployment) checked there, once its pool has pods (tools/rehearsal/serving.py)
        self.deferred_pickers: dict[str, list[tuple[str, PlannedResource]]] = {}
        self._dns_names: dict[str | None, dict[str, str]] = {}
        self._dns_until = 0.0

    # -- the run ----------------------------------------------------------------------------------------------
    def run(self) -> int:
        if self.work.exists():
            shutil.rmtree(self.work)
        self.work.mkdir(parents=True)
        self.report.binaries = {name: str(info.get("version", "?")) for name, info in cache.built_versions().items()}
        waves = rollout_waves(self.env, self.env_name)
        try:
            self.network = PodNetwork.create()
            self.proxy = ServiceProxy(self.network, lambda: list(self.targets.values()), self.cluster_of_address)
            self.proxy.start()
            with Supervisor(self.work / "logs") as supervisor:
                self.supervisor = supervisor
                try:
                    self._waves(waves)
                finally:  # the loops that poll the clusters end before the clusters' processes do
                    self._stop_controllers()
                    self.proxy.stop()
            self.report.cpu = dict(supervisor.cpu)
        except (ProcessFailed, NetworkError) as exc:
            self.report.add(Check("control plane", "apply", False, str(exc), "-", self.env_name))
        finally:
            if self.network is not None:
                self.network.close()
            # Its own (this Python process) and every child's it waited for (the programs above, Helm, ip, kubectl).
            own, children = getrusage(RUSAGE_SELF), getrusage(RUSAGE_CHILDREN)
            self.report.cpu["rehearsal"] = own.ru_utime + own.ru_stime
            self.report.cpu["all child processes"] = children.ru_utime + children.ru_stime
            self.report.write(self.out_dir / "rehearsal.json")
        return self.report.conclude()

    def _waves(self, waves: list[Wave]) -> None:
        for wave in waves:
            self.console.rule(f"wave {wave.name}: {', '.join(wave.stacks)}")
            started = time.monotonic()
            failed_before = len(self.report.failed)
            for stack in wave.stacks:
                self._stack(wave, self.slices[stack])
            check_members(self, wave)
            check_propagation(self, wave)
            check_scheduled(self, wave)
            check_node_daemons(self, wave)
            check_pickers(self, wave)
            check_gateways(self, wave)
            run_gates(self, wave)
            self.report.waves[wave.name] = time.monotonic() - started
            self.console.print(f"  wave {wave.name}: {self.report.waves[wave.name]:.0f} s")
            if len(self.report.failed) > failed_before and self.report.stopped_at is None:
                self.report.stopped_at = wave.name
            if wave.name == self.until_wave:
                break

    def _stop_controllers(self) -> None:
        for target in self.targets.values():
            for controller in target.controllers:
                controller.stop()
            target.controllers.clear()
            target.kube.close()

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
                gke=region.critical_pods_need_quota,
                host=network.host_ip,
            )
        admin_cert = plane.admin.write(plane.pki, "admin")
        kube = Kube(plane.server, plane.pki / "ca.crt", cert=admin_cert, watched=WATCHED, watched_metadata=INJECTABLE)
        target = Target(name, plane, kube, region, index)
        self.targets[name] = target
        for obj in cloud.cloud_objects(region.cloud):
            kube.create(obj, field_manager=cloud.STAND_IN_MANAGER)
        self._resolve_reads(target)
        if region.cloud == "gcp" and self._multi_networking(name):
            self._install_files(target, CLOUD_CRDS["gke-multi-networking"])
        controllers = cloud.CloudControllers(kube, cloud=region.cloud, region=region.region, cluster=name)
        controllers.start()
        target.controllers.append(controllers)
        target.kubelet = Kubelet(self, target)
        target.kubelet.start()
        target.controllers.append(target.kubelet)
        kwok.start_kwok(
            self.supervisor,
            cluster=name,
            kubeconfig=plane.admin_kubeconfig,
            node_ip=network.host_ip,
            workdir=plane.directory / "kwok",
        )
        count = 0
        for node in nodes.region_nodes(
            self.plan, self.env, self.env_name, region, lambda n: network.node_cidr(index, n)
        ):
            kube.create(node, field_manager="rehearsal-nodes")
            count += 1
        wait_until(
            f"{name}: {count} kwok nodes Ready",
            lambda: sum(is_ready(n) for n in kube.list("v1", "Node")) >= count,
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

    def _resolve_reads(self, target: Target) -> None:
        """The offline plan answers a read of an existing object with a mock (tools/plan/mocks.py: a Namespace
        read by name gets a UID derived from the read's resource name); `pulumi up` reads the live object. So the
        values of the reads the program makes of a cluster (its kube-system Namespace, whose UID is the member's
        Karmada cluster id: components/federation/member.py kube_system_uid) are put back as this cluster has them
        wherever the plan holds the mock's; so is the cluster's API endpoint, which the program reads from the
        cloud's cluster."""
        for namespace in ("kube-system",):
            live = target.kube.get("v1", "Namespace", namespace)
            if live is not None:
                self.reads[read_namespace_uid(f"{target.name}-{namespace}")] = live["metadata"]["uid"]
        # Its API server's address, as the cloud's cluster reports it (the `clusters` output of its stack: what a
        # push member's Karmada Cluster is dialled at) -> the rehearsal's own server.
        for stack in [*self.plan.stacks.values(), self.plan]:
            endpoint = (
                (stack.outputs.get("clusters") or {}).get(target.region.name if target.region else "") or {}
            ).get("endpoint")
            if isinstance(endpoint, str):
                self.reads[api_endpoint(endpoint)] = target.plane.server

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

    def limit(self, limit: Limit) -> Limit:
        return self.report.limit(limit)

    kube_version = KUBE_VERSION

    def install_release(self, run: StackRun, resource: PlannedResource) -> bool | ReleaseWait:
        from tools.rehearsal.releases import install_release

        return install_release(run, resource)

    def start_controllers(self, run: StackRun, target: Target, resource: PlannedResource, rendered: Any) -> None:
        """What a release's controllers do where the rehearsal cannot run them but others depend on it: the
        cert-manager stand-in (tools/rehearsal/certmanager.py), KEDA's scaling of idle models to zero
        (tools/rehearsal/keda.py) and Fluid's volumes (tools/rehearsal/fluid.py). The other releases' controllers are
        the pods the cluster's kubelet runs."""
        key, _ = helm.release_source(resource.inputs)
        found = _stand_in(key[0], target, resource.inputs)
        if found is None:
            return
        stand_in, controllers, reason, stands_in = found
        if any(type(c) is type(stand_in) for c in target.controllers):
            return  # one per cluster, started by the chart's first release there
        stand_in.start()
        target.controllers.append(stand_in)
        run.r.limit(run._limit(resource, "apply", controllers, reason, stands_in))

    def served_services(
        self, run: StackRun, target: Target, resource: PlannedResource, rendered: Any
    ) -> set[tuple[str, str]]:
        """(namespace, Service) of the release whose pods run a program the rehearsal has."""
        return served_by_programs(rendered.manifests, run.release_namespace)

    def pending_reason(self, target: Target, namespace: str, selector: str) -> str:
        return pending_reason(target.kube, namespace, selector)

    def provider_target(self, name: str) -> Target | None:
        """A cluster the rehearsal does not start itself (Karmada's API, which the host's release runs as pods),
        reached as the program's Kubernetes provider for it reaches it: its kubeconfig, its server's name
        resolved as DNS would (the Service's load balancer hostname -> the API server pod)."""
        provider = next((r for r in self.plan.resources if r.type == K8S_PROVIDER and r.name == name), None)
        if provider is None or not isinstance(provider.inputs.get("kubeconfig"), str):
            return None
        if time.monotonic() < self.unreachable.get(name, 0.0):
            return None  # tried a moment ago: every object of that provider fails with the same answer
        import base64
        import urllib.parse

        import yaml

        config = yaml.safe_load(provider.inputs["kubeconfig"])
        cluster = config["clusters"][0]["cluster"]
        user = config["users"][0]["user"]
        if "client-certificate-data" not in user:
            return None
        server = cluster["server"]
        url = urllib.parse.urlsplit(server)
        address = self.dns(fresh=True).get(url.hostname or "")
        if address is None:
            self.unreachable[name] = time.monotonic() + 10
            return None
        directory = self.work / name
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "ca.crt").write_text(base64.b64decode(cluster["certificate-authority-data"]).decode())
        (directory / "client.crt").write_text(base64.b64decode(user["client-certificate-data"]).decode())
        (directory / "client.key").write_text(base64.b64decode(user["client-key-data"]).decode())
        kube = Kube(
            f"https://{address}:{url.port or 443}",
            directory / "ca.crt",
            cert=(directory / "client.crt", directory / "client.key"),
            server_name=url.hostname,
        )
        try:
            wait_until(
                f"{name}: {server} /readyz",
                lambda: kube.session.get(kube.server + "/readyz", timeout=5).text == "ok",
                timeout=60,
            )
        except ProcessFailed:
            self.unreachable[name] = time.monotonic() + 120
            return None
        plane = ControlPlane(name, directory, kube.server, None, None)  # type: ignore[arg-type]
        config["clusters"][0]["cluster"]["server"] = kube.server
        config["clusters"][0]["cluster"]["tls-server-name"] = url.hostname  # its certificate names the host
        plane.admin_kubeconfig.write_text(yaml.safe_dump(config))
        target = Target(name, plane, kube, None, -1, server_name=url.hostname)
        self.targets[name] = target
        self.console.print(f"  {name}: reached at {server} (-> {address})")
        return target

    def metrics_token(self, target: Target) -> str:
        """A token allowed to GET /metrics, as the platform's Prometheus has: a ServiceAccount of the rehearsal's
        own (kube-system/rehearsal-metrics-reader), bound to `get` on the /metrics URL only."""
        if target.name in self._metrics_tokens:
            return self._metrics_tokens[target.name]
        name = "rehearsal-metrics-reader"
        objects: list[dict[str, Any]] = [
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": "kube-system"}},
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": name},
                "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "kube-system"}],
            },
        ]
        for obj in objects:
            target.kube.apply(obj, field_manager="rehearsal")
        self._metrics_tokens[target.name] = target.kube.token("kube-system", name)
        return self._metrics_tokens[target.name]

    @staticmethod
    def has_binary(name: str) -> bool:
        return cache.binary_path(name).is_file()

    def sync(self, target: Target) -> None:
        """One pass of the cluster's kubelet: pods it runs show their processes' state before anyone reads them."""
        if target.kubelet is not None:
            with contextlib.suppress(ApiError, OSError):
                target.kubelet.reconcile()

    def _endpoints(self, target: Target) -> dict[tuple[str, str], list[tuple[str, dict[int, int]]]]:
        """(namespace, Service) -> [(ready endpoint address, {service port: endpoint port})]."""
        found: dict[tuple[str, str], list[tuple[str, dict[int, int]]]] = {}
        services = {(s["metadata"]["namespace"], s["metadata"]["name"]): s for s in target.kube.list("v1", "Service")}
        for eps in target.kube.list("discovery.k8s.io/v1", "EndpointSlice"):
            meta = eps["metadata"]
            svc = services.get((meta["namespace"], (meta.get("labels") or {}).get("kubernetes.io/service-name", "")))
            if svc is None:
                continue
            by_name = {p.get("name", ""): p.get("port") for p in eps.get("ports") or []}
            ports = {
                p["port"]: by_name.get(p.get("name", ""), p["port"]) for p in (svc.get("spec") or {}).get("ports") or []
            }
            for endpoint in eps.get("endpoints") or []:
                if (endpoint.get("conditions") or {}).get("ready"):
                    for address in endpoint.get("addresses") or []:
                        found.setdefault((meta["namespace"], svc["metadata"]["name"]), []).append((address, ports))
        return found

    def cluster_of_address(self, address: str) -> str | None:
        """The region cluster a pod address belongs to (each has its own range of node pod CIDRs)."""
        if self.network is None or ipaddress.ip_address(address) not in self.network.prefix:
            return None
        index = int(address.split(".")[2]) // NODES_PER_CLUSTER
        return next((t.name for t in self.targets.values() if t.region is not None and t.index == index), None)

    def dns(self, cluster: str | None = None, *, fresh: bool = False) -> dict[str, str]:
        """Name -> address as a pod of `cluster` (None: outside every cluster) is answered: `_names()`, asked of the
        clusters at most every DNS_TTL_SECONDS (each cluster's kubelet refreshes its pods' /etc/hosts from it),
        unless `fresh`."""
        with self._dns_lock:
            if fresh or time.monotonic() >= self._dns_until:
                self._dns_names = self._names()
                self._dns_until = time.monotonic() + DNS_TTL_SECONDS
            every, own = self._dns_names.get(None, {}), self._dns_names.get(cluster, {}) if cluster else {}
            return {**every, **own}

    def _names(self) -> dict[str | None, dict[str, str]]:
        """Name -> address, as cluster DNS and public DNS would answer a pod. Under None what every pod resolves
        (public DNS): every load balancer hostname at a ready endpoint of its Service; a load balancer reached by
        address (GCP) is keyed by that address, as `provider_target` looks up its kubeconfig's server. Under a
        cluster's name what only its pods resolve (its cluster DNS): its Services at their ClusterIPs (a headless one
        at a ready endpoint; a name two namespaces share, as its bare name, the first's), each of its pods with a
        hostname and subdomain. Another cluster's Service is no name here, as it is none in a cluster."""
        names: dict[str, str] = {}
        by_cluster: dict[str | None, dict[str, str]] = {None: names}
        for target in list(self.targets.values()):
            if target.region is None:
                continue
            own = by_cluster.setdefault(target.name, {})
            with contextlib.suppress(ApiError, OSError):
                endpoints = self._endpoints(target)
                for svc in target.kube.list("v1", "Service"):
                    meta, spec = svc["metadata"], svc.get("spec") or {}
                    key = (meta["namespace"], meta["name"])
                    ip = spec.get("clusterIP")
                    ready = endpoints.get(key)
                    address = ip if ip and ip != "None" else (ready[0][0] if ready else None)
                    if address:
                        for suffix in ("", f".{key[0]}", f".{key[0]}.svc", f".{key[0]}.svc.cluster.local"):
                            own.setdefault(f"{key[1]}{suffix}", address)
                    for ingress in ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []:
                        # its name (an AWS NLB) or its address (GCP: the reserved loadBalancerIP) -> a ready endpoint
                        address = ingress.get("hostname") or ingress.get("ip")
                        if address and key in endpoints:
                            names[address] = endpoints[key][0][0]
                for pod in target.kube.list("v1", "Pod"):
                    spec, ip = pod.get("spec") or {}, (pod.get("status") or {}).get("podIP")
                    if spec.get("subdomain") and ip:
                        host = spec.get("hostname") or pod["metadata"]["name"]
                        ns = pod["metadata"]["namespace"]
                        own[f"{host}.{spec['subdomain']}.{ns}.svc.cluster.local"] = ip
                        own[f"{host}.{spec['subdomain']}.{ns}.svc"] = ip
        return by_cluster

    def service_links(self, target: Target, namespace: str) -> dict[str, str]:
        """The `<SERVICE>_SERVICE_HOST/PORT[_<PORT NAME>]` variables a kubelet sets for the Services of the
        pod's namespace (their ClusterIPs, which the rehearsal's service proxy serves)."""
        env: dict[str, str] = {}
        with contextlib.suppress(ApiError, OSError):
            for svc in target.kube.list("v1", "Service", namespace):
                spec = svc.get("spec") or {}
                ports = spec.get("ports") or []
                if not ports or spec.get("clusterIP") in (None, "", "None"):
                    continue
                prefix = svc["metadata"]["name"].upper().replace("-", "_")
                env[f"{prefix}_SERVICE_HOST"] = spec["clusterIP"]
                env[f"{prefix}_SERVICE_PORT"] = str(ports[0]["port"])
                for port in ports:
                    if port.get("name"):
                        env[f"{prefix}_SERVICE_PORT_{port['name'].upper().replace('-', '_')}"] = str(port["port"])
        return env


def _stand_in(chart: str, target: Target, inputs: dict[str, Any]) -> tuple[ReconcileLoop, str, str, str] | None:
    """The rehearsal's stand-in for a chart's controllers, with what it stands for, why and what it does (a
    declared limit); None for a chart whose controllers the kubelet runs, or that needs none."""
    values = inputs.get("values") or {}
    match chart:
        case "cert-manager":
            namespace = values.get("clusterResourceNamespace") or inputs.get("namespace") or "default"
            return (
                CertManagerStandIn(target.kube, target.name, namespace),
                "cert-manager's controller, webhook and cainjector",
                "their modules (cmd/controller, cmd/webhook, cmd/cainjector) have no version the module proxy "
                "serves at v1.21.1",
                "the rehearsal's cert-manager stand-in (tools/rehearsal/certmanager.py) issues each Certificate's "
                "Secret from its Issuer and injects CA bundles as cainjector does; cert-manager's webhook does "
                "not validate the Certificates and Issuers",
            )
        case "keda":
            return (
                KedaStandIn(target.kube, target.name, values.get("watchNamespace")),
                "KEDA's operator and the Prometheus its triggers read",
                "the chart is not a Go module (no objects rendered), and no Prometheus runs here",
                "the rehearsal's KEDA stand-in (tools/rehearsal/keda.py) scales each watched ScaledObject's "
                "target at zero (minReplicaCount 0) to zero once its pods are placed, as KEDA's first poll does "
                "when no request has come and its triggers answer without an error (which the rehearsal cannot "
                "show); it never scales up",
            )
        case "fluid":
            mount_root = (values.get("runtime") or {}).get("mountRoot") or fluid.MOUNT_ROOT_DEFAULT
            return (
                FluidStandIn(target.kube, target.name, mount_root),
                "Fluid's controllers (dataset, alluxioruntime, thinruntime, fluid-webhook, csi)",
                "their images install the runtimes' charts with their own Helm and mount FUSE, which kwok pods "
                "do not do",
                "the rehearsal's Fluid stand-in (tools/rehearsal/fluid.py) makes each Dataset's PersistentVolume "
                "and claim as the AlluxioRuntime controller does, its node affinity the runtime's "
                "fuse.nodeSelector; no cache worker runs",
            )
    return None


class StackRun:
    """One stack's resources in the order `pulumi up` reaches them (module docstring)."""

    def __init__(self, rehearsal: Rehearsal, wave: Wave, stack: str, plan: Plan):
        self.r, self.wave, self.stack, self.plan = rehearsal, wave, stack, plan
        self.outcome: dict[str, bool] = {}
        self.awaiting: dict[str, Awaiting] = {}
        self.releasing: dict[str, ReleaseWait] = {}  # releases whose objects Helm waits for
        self.release_namespace = "default"
        self.unexecuted: dict[str, list[str]] = {}  # resource type -> names the rehearsal does not execute

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
        """Resources in Pulumi's order (module docstring); awaits run beside everything else, as in Pulumi; then
        what it did not execute, as limits."""
        try:
            self._run()
        finally:
            self._report_unexecuted()

    def _report_unexecuted(self) -> None:
        """One limit per resource type the rehearsal took as done without executing it (cloud.not_executed)."""
        for resource_type, names in sorted(self.unexecuted.items()):
            reason, stands_in = cloud.not_executed(resource_type) or ("", "")
            shown = ", ".join(names[:3]) + (f", +{len(names) - 3} more" if len(names) > 3 else "")
            self.r.limit(
                Limit(
                    f"{resource_type} x{len(names)} ({shown})", "apply", reason, stands_in, self.wave.name, self.stack
                )
            )

    def _run(self) -> None:
        pending = [r for r in self.plan.resources if _executable(r)]
        deps = {r.urn: self.deps(r) for r in pending}
        while pending or self.awaiting or self.releasing:
            ready = [r for r in pending if deps[r.urn] <= self.outcome.keys()]
            quick = [r for r in ready if r.type != HELM_RELEASE]
            if quick:
                for resource in quick:
                    pending.remove(resource)
                    self._start(resource, deps[resource.urn])
                continue
            if (self.awaiting or self.releasing) and self._poll_awaiting():
                continue  # what waited on it may be ready now
            if ready:  # a release does not wait for awaits or releases it does not depend on, as in Pulumi
                pending.remove(ready[0])
                self._start(ready[0], deps[ready[0].urn])
                continue
            if self.awaiting or self.releasing:
                time.sleep(1.0)
                continue
            for r in pending:
                self.outcome[r.urn] = False
                self.r.check(self._check(r, "apply", False, "never reached: a dependency cycle"))
            return

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
        """One look at every awaited object and every release's wait; True when one of them finished."""
        finished = False
        targets = [w.target for w in self.awaiting.values()] + [w.target for w in self.releasing.values()]
        for target in {id(t): t for t in targets}.values():
            self.r.sync(target)
        for urn, waiting in list(self.awaiting.items()):
            ready, seen = pulumi_k8s.probe_ready(waiting.target.kube, waiting.obj)
            ok = ready
            if waiting.obj["kind"] == "Service":
                ok, seen = waiting.settled(ready, seen)
            now = time.monotonic()
            expired = now >= waiting.deadline
            if not ok and not expired:
                continue
            if expired and ready and not ok and waiting.endpoint_events:
                # Ready, its Endpoints settling: the provider, whose own wait is minutes, takes it when the next timer
                # fires after the latest change, and at its timeout takes it unsettled (service.go L255-L258). The
                # rehearsal's wait is extended to the next timer: a change seen late in it gets its settle.
                timeout = waiting.started + pulumi_k8s.PROVIDER_TIMEOUT_SECONDS
                if now < timeout:
                    waiting.deadline = min(waiting.next_settle_timer(now) + 1, timeout)
                    continue
                ok, seen = True, f"{seen}; still settling at the provider's timeout, which takes it so"

            def why(namespace: str, selector: str, target: Target = waiting.target) -> str:
                return self.r.pending_reason(target, namespace, selector)

            done = "applied (server-side apply)" if is_patch(waiting.resource) else "created"
            detail = (
                f"{done}; {seen}"
                if ok
                else f"{done}; " + pulumi_k8s.not_ready(waiting.obj, seen, now - waiting.started, why)
            )
            check = self._check(waiting.resource, "apply", ok, detail)
            check.seconds = round(now - waiting.started, 1)
            self.r.check(check)
            self.outcome[urn] = ok
            del self.awaiting[urn]
            finished = True
        for urn, release in list(self.releasing.items()):  # last: a release done runs its post-install hooks here
            outcome = release.look()
            if outcome is not None:
                self.outcome[urn] = outcome
                del self.releasing[urn]
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

    def _limit(self, resource: PlannedResource, category: str, obj: str, reason: str, stands_in: str) -> Limit:
        return Limit(
            obj,
            category,  # type: ignore[arg-type]
            reason,
            stands_in,
            self.wave.name,
            self.stack,
            cluster=self.plan.cluster_of(resource),
        )

    def target(self, resource: PlannedResource) -> Target | None:
        name = self.plan.cluster_of(resource) or ""
        return self.r.targets.get(name) or self.r.provider_target(name)

    def execute(self, resource: PlannedResource) -> bool | None:
        """True / False when done; None when created and awaited (finished by _poll_awaiting)."""
        if resource.type == HELM_RELEASE:
            installed = self.r.install_release(self, resource)
            if isinstance(installed, bool):
                return installed
            self.releasing[resource.urn] = installed
            return None
        if resource.type == CONFIG_FILE:
            return self._config_file(resource)
        if not is_kubernetes_object(resource):
            # The Kubernetes providers (the rehearsal's clusters) and tls resources (computed by the rehearsal's plan)
            # are done; a cloud, random or command resource is taken as done too, and reported as a limit.
            if cloud.not_executed(resource.type) is not None:
                self.unexecuted.setdefault(resource.type, []).append(resource.name)
            return True
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
        obj = _resolved(_plain(resource.inputs), self.r.reads)
        if target.region is None:  # Karmada's API
            obj = live_push_values(self.r, obj)
        if self._unserved_backend(resource, obj):
            return True
        outcome = pulumi_k8s.create_or_patch(target.kube, obj, urn=resource.urn, patch=is_patch(resource))
        if outcome.ok and pulumi_k8s.awaited(obj):  # a Patch waits as its kind does (upstream.PULUMI_PATCH_AWAITS)
            self.awaiting[resource.urn] = Awaiting(
                resource, target, obj, started, started + pulumi_k8s.await_seconds(obj)
            )
            return None
        check = self._check(resource, "apply", outcome.ok, outcome.detail)
        check.seconds = round(time.monotonic() - started, 1)
        self.r.check(check)
        return outcome.ok

    def _unserved_backend(self, resource: PlannedResource, obj: dict[str, Any]) -> bool:
        """A webhook configuration or APIService of the plan whose Service no program of the rehearsal serves is not
        applied, as a release's is not (reported): every request it admits, or its API's discovery, would fail."""
        cluster = self.plan.cluster_of(resource)
        objects = [r.inputs for r in self.plan.kubernetes_objects() if self.plan.cluster_of(r) == cluster]
        missing = [services for _, services in unserved([obj], served_by_programs(objects, "default"))]
        if not missing:
            return False
        self.r.limit(
            self._limit(
                resource,
                "apply",
                pulumi_k8s.describe(obj),
                f"not applied: the API server would call {', '.join(missing[0])}, a program the rehearsal does not "
                "run (no binary of it at the pin: tools/rehearsal/binaries.py)",
                "nothing: the requests it would admit are admitted unchecked, or its API is not served",
            )
        )
        return True

    def _config_file(self, resource: PlannedResource) -> bool:
        url = resource.inputs.get("file", "")
        vendored = VENDORED_CONFIG_FILES.get(url)
        target = self.target(resource)
        if vendored is None or target is None:
            detail = "its cluster is not up" if target is None else f"no source for {url}"
            self.r.check(self._check(resource, "apply", False, detail))
            return False
        docs, source = load_files(VENDORED / vendored[0]), f"conformance/upstream/{vendored[0]}"
        self.r.limit(
            self._limit(
                resource,
                "apply",
                f"ConfigFile {resource.name} ({url})",
                vendored[1],
                f"{source}: the file reduced to the kinds we render (conformance/upstream/MANIFEST.json)",
            )
        )
        ok = True
        for doc in docs:
            outcome = pulumi_k8s.create_or_patch(
                target.kube, doc, urn=f"{resource.urn}/{doc['metadata']['name']}", patch=False
            )
            ok &= outcome.ok
            self.r.check(
                Check(
                    pulumi_k8s.describe(doc),
                    "apply",
                    outcome.ok,
                    f"{outcome.detail} (ConfigFile {resource.name}: {source})",
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
    # A Service's Endpoints as last seen, and each change's window: (the look before it, the look that saw it).
    endpoints: str | None = None
    endpoint_events: list[tuple[float, float]] = field(default_factory=list)
    endpoints_looked: float | None = None  # the last look at its Endpoints

    def settled(self, ready: bool, seen: str) -> tuple[bool, str]:
        """A Service that is otherwise ready (no not-ready address) is taken as ready once its Endpoints have
        settled as the provider's watch settles them: each Endpoints event (the first listing included) marks them
        unsettled and starts a 10 s timer that marks them settled, none cancelled: they are settled once any timer
        fires after the latest change; with no Endpoints object, no event comes and they never settle
        (upstream.PULUMI_SERVICE_AWAITS_SETTLED_ENDPOINTS)."""
        meta = self.obj["metadata"]
        live = self.target.kube.get("v1", "Service", meta["name"], meta.get("namespace"))
        if live is None or not pulumi_k8s.waits_for_endpoints(live):
            return ready, seen
        version, now = pulumi_k8s.endpoints_version(self.target.kube, self.obj), time.monotonic()
        if version is not None and version != self.endpoints:
            self.endpoints = version
            # The change came after the last look at it (the first listing: as the provider's watch starts).
            after = self.endpoints_looked or now
            self.endpoint_events.append((after, now))
        self.endpoints_looked = now
        settle = pulumi_k8s.SERVICE_SETTLE_SECONDS
        fired = [seen_at + settle for _, seen_at in self.endpoint_events if seen_at + settle <= now]
        # Settled if a timer may have fired after the latest change: after the look before it (a look cannot tell
        # which of a timer and a change in the same second came first).
        if ready and not (fired and max(fired) > self.endpoint_events[-1][0]):
            if not self.endpoint_events:
                return False, f"{seen}, settling (no Endpoints object: no event, no timer)"
            since = now - self.endpoint_events[-1][1]
            return False, f"{seen}, settling ({since:.0f} s since its last Endpoints change, {settle:.0f} s needed)"
        return ready, seen

    def next_settle_timer(self, now: float) -> float:
        """When the next of the Endpoints' timers fires (one is pending while they are not settled), or now."""
        settle = pulumi_k8s.SERVICE_SETTLE_SECONDS
        return min((seen_at + settle for _, seen_at in self.endpoint_events if seen_at + settle > now), default=now)


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


def _resolved(value: Any, reads: dict[str, str]) -> Any:
    """`value` with every string that is a read's mock value replaced by the live one."""
    if isinstance(value, dict):
        return {k: _resolved(v, reads) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolved(v, reads) for v in value]
    return reads.get(value, value) if isinstance(value, str) else value


def pending_reason(kube: Kube, namespace: str, selector: str) -> str:
    """Why the pods a selector picks are not ready: the scheduler's or kwok's last word on each."""
    with contextlib.suppress(ApiError):
        pods = kube.list("v1", "Pod", namespace, selector=selector)
        if not pods:
            return "no pods (their controller did not create any)"
        reasons = []
        for pod in pods[:3]:
            status = pod.get("status") or {}
            conditions = {c.get("type"): c for c in status.get("conditions") or []}
            scheduled, references = (
                conditions.get("PodScheduled") or {},
                conditions.get(kwok.REFERENCES_CONDITION) or {},
            )
            if scheduled and scheduled.get("status") != "True":
                reasons.append(f"pod {pod['metadata']['name']} unschedulable: {scheduled.get('message', '')}")
            elif references.get("status") == "False":  # what the kubelet waits for (tools/rehearsal/references.py)
                reasons.append(
                    f"pod {pod['metadata']['name']} {status.get('phase', 'Pending')}: {references.get('reason')}: "
                    f"{references.get('message')}"
                )
            else:
                reasons.append(f"pod {pod['metadata']['name']} {status.get('phase', 'Pending')}{_containers(status)}")
        return "; ".join(reasons)
    return ""


def _containers(status: dict[str, Any]) -> str:
    """Containers that are not ready, with what their kubelet says (restarts, the last line of a crash)."""
    parts = []
    for c in status.get("containerStatuses") or []:
        if c.get("ready"):
            continue
        state = c.get("state") or {}
        waiting = state.get("waiting") or {}
        what = waiting.get("reason") or next(iter(state), "not ready")
        message = f": {waiting['message']}" if waiting.get("message") else ""
        parts.append(f"{c['name']} {what}, {c.get('restartCount', 0)} restarts{message}")
    return f" ({'; '.join(parts)})" if parts else ""


def wait_crds_established(kube: Kube, crds: list[dict[str, Any]], timeout: float = CRD_ESTABLISHED_SECONDS) -> None:
    """Until discovery serves every version of every CRD (what `Established` promises), asked of discovery:
    polling the CRD objects themselves would fetch their schemas, up to a megabyte each, on every round."""
    wanted = [
        (f"{crd['spec']['group']}/{version['name']}", crd["spec"]["names"]["kind"])
        for crd in crds
        for version in crd["spec"].get("versions") or []
        if version.get("served", True)
    ]

    def established() -> bool:
        kube.forget()
        return all(kube.served(api_version, kind) for api_version, kind in wanted)

    wait_until(
        f"CRDs established: {', '.join(c['metadata']['name'] for c in crds[:3])}…",
        established,
        timeout=timeout,
        interval=0.5,
    )


def vendored_crds(paths: tuple[str, ...]) -> list[dict[str, Any]]:
    return [doc for rel in paths for doc in load_all((VENDORED / rel).read_text())]


Installer = Callable[[StackRun, PlannedResource], bool]
