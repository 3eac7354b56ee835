"""One local control plane: etcd, kube-apiserver, kube-controller-manager and kube-scheduler on loopback, with a
CA, serving and client certificates and a service-account signing key made for this run.

What differs from a cloud control plane, on purpose: etcd speaks plain HTTP on loopback (nothing else can reach
it); the API server reaches webhooks and aggregated APIs through their Services' endpoints
(`--enable-aggregator-routing`), since loopback has no Service network; GKE's ResourceQuota admission of
critical pods is configured where the region is on GCP (catalog fact `gke-critical-pods-need-a-quota`)."""

from __future__ import annotations

import base64
import json
import ssl
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tools.rehearsal import cache
from tools.rehearsal.pki import KeyPair, issue, key_pem, new_ca, new_key, public_key_pem
from tools.rehearsal.processes import Process, Supervisor, free_port, wait_until

START_TIMEOUT = 180.0
# The API server's own name on every cluster (its serving certificate's SANs).
API_NAMES = ("kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")

# GKE's critical-pods admission (FACTS-3.md §8; kubernetes.io/docs/concepts/policy/resource-quotas/
# #limit-priority-class-consumption-by-default): pods of these classes need a quota matching their class.
GKE_CRITICAL_CLASSES = ("system-node-critical", "system-cluster-critical")
GKE_ADMISSION = {
    "apiVersion": "apiserver.config.k8s.io/v1",
    "kind": "AdmissionConfiguration",
    "plugins": [
        {
            "name": "ResourceQuota",
            "configuration": {
                "apiVersion": "apiserver.config.k8s.io/v1",
                "kind": "ResourceQuotaConfiguration",
                "limitedResources": [
                    {
                        "resource": "pods",
                        "matchScopes": [
                            {"scopeName": "PriorityClass", "operator": "In", "values": list(GKE_CRITICAL_CLASSES)}
                        ],
                    }
                ],
            },
        }
    ],
}
# What GKE creates in kube-system so its own critical pods are admitted there.
GKE_KUBE_SYSTEM_QUOTA = {
    "apiVersion": "v1",
    "kind": "ResourceQuota",
    "metadata": {"name": "gcp-critical-pods", "namespace": "kube-system"},
    "spec": {
        "hard": {"pods": "1G"},
        "scopeSelector": {
            "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": list(GKE_CRITICAL_CLASSES)}]
        },
    },
}


def kubeconfig(name: str, server: str, ca_pem: str, user: dict[str, str], tls_server_name: str | None = None) -> dict:
    cluster: dict[str, Any] = {
        "server": server,
        "certificate-authority-data": base64.b64encode(ca_pem.encode()).decode(),
    }
    if tls_server_name:
        cluster["tls-server-name"] = tls_server_name
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
    }


def cert_user(pair: KeyPair) -> dict[str, str]:
    return {
        "client-certificate-data": base64.b64encode(pair.cert_pem.encode()).decode(),
        "client-key-data": base64.b64encode(pair.key_pem.encode()).decode(),
    }


@dataclass
class ControlPlane:
    """A running API server: where it is and how to reach it as admin."""

    name: str
    directory: Path
    server: str
    ca: KeyPair
    admin: KeyPair
    processes: list[Process] = field(default_factory=list)

    @property
    def pki(self) -> Path:
        return self.directory / "pki"

    @property
    def admin_kubeconfig(self) -> Path:
        return self.directory / "admin.kubeconfig"

    def write_kubeconfig(self, path: Path, user: dict[str, str], tls_server_name: str | None = None) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(kubeconfig(self.name, self.server, self.ca.cert_pem, user, tls_server_name)))
        path.chmod(0o600)
        return path

    def token_kubeconfig(self, path: Path, token: str) -> Path:
        return self.write_kubeconfig(path, {"token": token})

    def get_text(self, path: str) -> str:
        """GET an API path as admin."""
        context = ssl.create_default_context(cadata=self.ca.cert_pem)
        cert, key = self.admin.write(self.pki, "admin")
        context.load_cert_chain(cert, key)
        with urllib.request.urlopen(f"{self.server}{path}", context=context, timeout=10) as response:
            return response.read().decode()

    def get(self, path: str) -> Any:
        return json.loads(self.get_text(path))


def start_etcd(supervisor: Supervisor, directory: Path, name: str) -> tuple[str, Process]:
    client, peer = free_port(), free_port()
    url = f"http://127.0.0.1:{client}"
    process = supervisor.start(
        f"{name}/etcd",
        [
            str(cache.binary_path("etcd")),
            f"--name={name}",
            f"--data-dir={directory / 'etcd'}",
            f"--listen-client-urls={url}",
            f"--advertise-client-urls={url}",
            f"--listen-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-cluster={name}=http://127.0.0.1:{peer}",
            "--unsafe-no-fsync",  # a rehearsal's etcd lives minutes on a shared disk: durability buys nothing
            "--quota-backend-bytes=2147483648",
            "--log-level=warn",
        ],
    )
    wait_until(f"{name}: etcd", lambda: _http_ok(f"{url}/health"), timeout=START_TIMEOUT, watch=[process])
    return url, process


def _http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as response:
        return response.status == 200


def start_apiserver(
    supervisor: Supervisor,
    *,
    name: str,
    directory: Path,
    etcd_url: str,
    service_cidr: str,
    host: str,
    binary: str = "kube-apiserver",
    extra_args: tuple[str, ...] = (),
    admission: dict | None = None,
    extra_sans: tuple[str, ...] = (),
    serving: KeyPair | None = None,
    ca: KeyPair | None = None,
) -> ControlPlane:
    """An API server on a free port of `host` (the pod network's bridge address: reachable from the host and from
    every pod). `serving`/`ca`: certificates the program rendered (Karmada's); by default this run's own."""
    pki = directory / "pki"
    port = free_port(host)
    ca = ca or new_ca(f"{name}-ca")
    first_service_ip = _first_ip(service_cidr)
    serving = serving or issue(
        ca,
        "kube-apiserver",
        dns_names=(*API_NAMES, "localhost", *extra_sans),
        ip_addresses=("127.0.0.1", host, first_service_ip),
        server=True,
    )
    admin = issue(ca, "rehearsal-admin", organizations=("system:masters",), client=True)
    front_ca = new_ca(f"{name}-front-proxy-ca")
    front_client = issue(front_ca, "front-proxy-client", client=True)
    sa_key = new_key()
    ca_crt = pki / "ca.crt"
    pki.mkdir(parents=True, exist_ok=True)
    ca_crt.write_text(ca.cert_pem)
    serving_crt, serving_key = serving.write(pki, "apiserver")
    front_ca_crt = pki / "front-proxy-ca.crt"
    front_ca_crt.write_text(front_ca.cert_pem)
    front_crt, front_key = front_client.write(pki, "front-proxy-client")
    (pki / "sa.key").write_text(key_pem(sa_key))
    (pki / "sa.pub").write_text(public_key_pem(sa_key))
    args = [
        str(cache.binary_path(binary)),
        f"--etcd-servers={etcd_url}",
        f"--bind-address={host}",
        # The `kubernetes` Service points at this server on the pod network's bridge, as a cluster's does at its
        # control plane: a pod dialling https://kubernetes.default.svc (a push-mode Karmada host's own Cluster)
        # reaches it through the service proxy.
        f"--advertise-address={host}",
        f"--secure-port={port}",
        f"--tls-cert-file={serving_crt}",
        f"--tls-private-key-file={serving_key}",
        f"--client-ca-file={ca_crt}",
        f"--service-account-key-file={pki / 'sa.pub'}",
        f"--service-account-signing-key-file={pki / 'sa.key'}",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-cluster-ip-range={service_cidr}",
        "--authorization-mode=Node,RBAC",
        "--allow-privileged=true",
        "--enable-aggregator-routing=true",
        f"--requestheader-client-ca-file={front_ca_crt}",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--proxy-client-cert-file={front_crt}",
        f"--proxy-client-key-file={front_key}",
        "--profiling=false",
        *extra_args,
    ]
    if admission is not None:
        path = pki / "admission.yaml"
        path.write_text(yaml.safe_dump(admission))
        args.append(f"--admission-control-config-file={path}")
    process = supervisor.start(f"{name}/{binary}", args)
    plane = ControlPlane(name, directory, f"https://{host}:{port}", ca, admin, [process])
    plane.write_kubeconfig(plane.admin_kubeconfig, cert_user(admin))
    wait_until(
        f"{name}: {binary} /readyz",
        lambda: plane.get_text("/readyz") == "ok",
        timeout=START_TIMEOUT,
        watch=[process],
    )
    return plane


def _first_ip(cidr: str) -> str:
    import ipaddress

    return str(next(ipaddress.ip_network(cidr).hosts()))


def start_controller_manager(
    supervisor: Supervisor, plane: ControlPlane, *, binary: str = "kube-controller-manager", controllers: str = "*"
) -> Process:
    """kube-controller-manager as the control plane runs it: its own identity, one service account per
    controller (`--use-service-account-credentials`), the token signer and the cluster CA."""
    pki = plane.directory / "pki"
    identity = issue(plane.ca, "system:kube-controller-manager", client=True)
    config = plane.write_kubeconfig(plane.directory / "controller-manager.kubeconfig", cert_user(identity))
    ca_key = pki / "ca.key"
    ca_key.write_text(plane.ca.key_pem)
    return supervisor.start(
        f"{plane.name}/{binary}",
        [
            str(cache.binary_path(binary)),
            f"--kubeconfig={config}",
            f"--authentication-kubeconfig={config}",
            f"--authorization-kubeconfig={config}",
            "--bind-address=127.0.0.1",
            f"--secure-port={free_port()}",
            f"--controllers={controllers}",
            "--use-service-account-credentials=true",
            f"--service-account-private-key-file={pki / 'sa.key'}",
            f"--root-ca-file={pki / 'ca.crt'}",
            f"--cluster-signing-cert-file={pki / 'ca.crt'}",
            f"--cluster-signing-key-file={ca_key}",
            "--leader-elect=false",
            "--concurrent-deployment-syncs=20",
            "--concurrent-replicaset-syncs=20",
            "--node-monitor-grace-period=60s",
        ],
    )


def start_scheduler(supervisor: Supervisor, plane: ControlPlane) -> Process:
    identity = issue(plane.ca, "system:kube-scheduler", client=True)
    config = plane.write_kubeconfig(plane.directory / "scheduler.kubeconfig", cert_user(identity))
    return supervisor.start(
        f"{plane.name}/kube-scheduler",
        [
            str(cache.binary_path("kube-scheduler")),
            f"--kubeconfig={config}",
            f"--authentication-kubeconfig={config}",
            f"--authorization-kubeconfig={config}",
            "--bind-address=127.0.0.1",
            f"--secure-port={free_port()}",
            "--leader-elect=false",
        ],
    )


def start_cluster(
    supervisor: Supervisor, *, name: str, directory: Path, service_cidr: str, gke: bool, host: str
) -> ControlPlane:
    """A member cluster's control plane, ready for objects (its controllers and scheduler started)."""
    directory.mkdir(parents=True, exist_ok=True)
    etcd_url, etcd = start_etcd(supervisor, directory, name)
    plane = start_apiserver(
        supervisor,
        name=name,
        directory=directory,
        etcd_url=etcd_url,
        service_cidr=service_cidr,
        host=host,
        admission=GKE_ADMISSION if gke else None,
    )
    plane.processes[:0] = [etcd]
    plane.processes.append(start_controller_manager(supervisor, plane))
    plane.processes.append(start_scheduler(supervisor, plane))
    return plane
