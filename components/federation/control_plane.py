"""The Karmada control plane on the federation host, reachable by members in other clouds.

Exposure (decided here): members in other clouds have no private path to the host's VPC, so the
Karmada API server gets a cloud load balancer with a public address, open only to the NAT egress
IPs of the environment's clusters and the configured `federation.apiServer.allowedCidrs`
(`loadBalancerSourceRanges`), and every client proves itself with a certificate of the federation's
CA. The host cloud's backend makes the load balancer (`public_load_balancer` in stacks/clouds): on AWS an NLB (its
DNS name is covered by a `*.elb.<region>.amazonaws.com` SAN); on GCP a passthrough load balancer on a reserved
address (an IP SAN). The chart's own Service stays ClusterIP for the in-cluster components and the host's agent.

Cluster failover needs NoExecute taints on failing members (`member_taint_policies`), which
karmada-webhook admits only with `--allow-no-execute-taint-policy`; the chart has no value for the
webhook's flags, so a server-side-apply patch sets its container `args` (the chart sets only
`command`, so Helm upgrades leave them alone).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_command as command
import pulumi_kubernetes as k8s

from components.catalog.charts import CHARTS, KARMADA_CFSSL_IMAGE, KARMADA_KUBECTL_IMAGE, KARMADA_VERSION
from components.catalog.regions import BUILTIN_STORAGE_CLASS
from components.config.region import RegionSpec
from components.federation.certificates import (
    AGENT_GROUP,
    AGENT_USER_PREFIX,
    AGENT_VALIDITY_HOURS,
    KarmadaCertificates,
    KarmadaCertificatesArgs,
    KeyPair,
    client_kubeconfig,
    signed_certificate,
)
from components.k8s.cluster import ClusterHandle, PublicLoadBalancer, kubernetes_provider
from components.k8s.helm import chart_patch_skips, helm_release, namespace
from components.k8s.topology import ZONE_LABEL

KARMADA_NAMESPACE = "karmada-system"


# The chart names its objects after the release: karmada-apiserver, karmada-webhook, ...
RELEASE = "karmada"
API_PORT = 5443
API_SERVER_LABELS = {"app": f"{RELEASE}-apiserver"}
INTERNAL_HOST = f"{RELEASE}-apiserver.{KARMADA_NAMESPACE}.svc.cluster.local"
INTERNAL_ENDPOINT = f"https://{INTERNAL_HOST}:{API_PORT}"
EXTERNAL_SERVICE = f"{RELEASE}-apiserver-external"
WEBHOOK_FLAGS = ["--allow-no-execute-taint-policy=true"]
REACHABLE_TIMEOUT_SECONDS = 900
# Run by `pulumi up` where it runs (the runner the provider connects from): /readyz through the load balancer, the
# server's certificate verified with the federation CA, until 200 (anonymous /readyz: system:public-info-viewer).
REACHABLE_SCRIPT = f"""set -eu
ca=$(mktemp); trap 'rm -f "$ca"' EXIT; printf '%s' "$KARMADA_CA" > "$ca"
deadline=$(( $(date +%s) + {REACHABLE_TIMEOUT_SECONDS} ))
until [ "$(curl -sS -o /dev/null -w '%{{http_code}}' --cacert "$ca" --max-time 10 "$KARMADA_ENDPOINT/readyz" || true)" = 200 ]; do
  [ "$(date +%s)" -lt "$deadline" ] || {{ echo "$KARMADA_ENDPOINT/readyz: no 200 in {REACHABLE_TIMEOUT_SECONDS}s" >&2; exit 1; }}
  sleep 10
done
"""
ETCD_VOLUME = "10Gi"


def karmada_name(stack: str) -> str:
    """The Karmada API server as a cluster: its provider, kubeconfig context and resource-name prefix."""
    return f"{stack}-karmada"


def server_dns_names(load_balancer: PublicLoadBalancer) -> tuple[str, ...]:
    """What the API server's certificate is valid for: the chart's in-cluster names and the load balancer's."""
    return (
        "kubernetes.default.svc",
        INTERNAL_HOST,
        f"*.{KARMADA_NAMESPACE}.svc.cluster.local",
        f"*.{KARMADA_NAMESPACE}.svc",
        f"*.etcd.{KARMADA_NAMESPACE}.svc.cluster.local",
        "localhost",
        *load_balancer.dns_names,
    )


def host_secret_values(certs: KarmadaCertificates) -> dict[str, Any]:
    """The private keys the chart takes with its certificates (a secret values file)."""
    return {
        "certs": {
            "custom": {
                "caKey": certs.ca.key_pem,
                "key": certs.server.key_pem,
                "frontProxyKey": certs.front_proxy_client.key_pem,
            }
        }
    }


ETCD_MEMBERS = 3
ETCD_POD_LABELS = {"app": "etcd"}  # the chart's etcd.labels, on its pods too (templates/_helpers.tpl L38-L46)
# The chart's own anti-affinity keeps the members on separate nodes (karmada-io/karmada@v1.18.2:charts/karmada/
# values.yaml L697-L707), which its `etcd.affinity` replaces: kept, and zones preferred besides, so that one zone lost
# leaves a quorum where the system pool spans three (each member's zonal volume then keeps it in its zone).
ETCD_SPREAD = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": ETCD_POD_LABELS}, "topologyKey": "kubernetes.io/hostname"}
        ],
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 100,
                "podAffinityTerm": {"labelSelector": {"matchLabels": ETCD_POD_LABELS}, "topologyKey": ZONE_LABEL},
            }
        ],
    }
}


def host_values(region: RegionSpec, production: bool, certs: KarmadaCertificates) -> dict[str, Any]:
    """Chart values of the control plane (installMode host), private keys aside."""
    replicas = 2 if production else 1
    tag = {"image": {"tag": KARMADA_VERSION}}
    return {
        "installMode": "host",
        "karmadaImageVersion": KARMADA_VERSION,
        "certs": {
            "mode": "custom",
            "custom": {
                "caCrt": certs.ca.cert_pem,
                "crt": certs.server.cert_pem,
                "frontProxyCaCrt": certs.front_proxy_ca.cert_pem,
                "frontProxyCrt": certs.front_proxy_client.cert_pem,
            },
        },
        "cfssl": {"image": KARMADA_CFSSL_IMAGE},
        "kubectl": {"image": KARMADA_KUBECTL_IMAGE},
        "apiServer": {"replicaCount": replicas, "serviceType": "ClusterIP", "labels": API_SERVER_LABELS},
        "aggregatedApiServer": {"replicaCount": replicas, **tag},
        "kubeControllerManager": {"replicaCount": replicas},
        "scheduler": {"replicaCount": replicas, **tag},
        "webhook": {"replicaCount": replicas, **tag},
        "controllerManager": {
            "replicaCount": replicas,
            **tag,
            # Failover: cluster (taint-based) and application failover; PropagateDeps: a model's
            # PodDisruptionBudget follows it (the interpreter's GetDependencies).
            "featureGates": {"Failover": True, "PropagateDeps": True},
            "extraCommandArgs": {"enable-no-execute-taint-eviction": "true"},
        },
        "etcd": {
            "internal": {
                "replicaCount": ETCD_MEMBERS if production else 1,
                # On a volume, not the chart's default hostPath (forbidden by Pod Security baseline).
                "storageType": "pvc",
                "pvc": {"storageClass": BUILTIN_STORAGE_CLASS[region.cloud], "size": ETCD_VOLUME},
            },
            **({"affinity": ETCD_SPREAD} if production else {}),
        },
    }


PublicLoadBalancerOf = Callable[[pulumi.Resource, str], PublicLoadBalancer]
"""The host cloud's backend: a public load balancer for a Service, what it reserves for it (an address) created as a
child of the given parent under the given name."""


@dataclass(frozen=True, kw_only=True)
class KarmadaControlPlaneArgs:
    host: ClusterHandle
    # The API server's load balancer, as the host's cloud makes it.
    load_balancer: PublicLoadBalancerOf
    stack: str
    production: bool
    # CIDRs allowed on the API server's load balancer.
    allowed_sources: pulumi.Input[Sequence[str]]
    # Pull members' cluster names: each agent's client certificate is signed here, where the CA key lives.
    agents: tuple[str, ...] = ()
    # Another stack (the global one) applies the final allowlist, once every member's NAT address exists.
    allowlist_applied_elsewhere: bool = False


class KarmadaControlPlane(pulumi.ComponentResource):
    """karmada chart (installMode host), its public endpoint, and a provider for the Karmada API."""

    certificates: KarmadaCertificates
    endpoint: pulumi.Output[str]  # https://<load balancer>:5443
    kubeconfig: pulumi.Output[str]  # secret: the API server's admin client certificate
    api: ClusterHandle  # the Karmada API server, for resources created in it
    namespace: k8s.core.v1.Namespace  # karmada-system on the host, which the host's own agent shares
    release: k8s.helm.v3.Release  # the control plane itself: the host's agent dials it in-cluster
    agent_certificates: dict[str, KeyPair]  # pull member's cluster name -> its agent's client certificate

    def __init__(self, name: str, args: KarmadaControlPlaneArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:federation:KarmadaControlPlane", name, None, opts)
        host, region = args.host, args.host.region
        ns = self.namespace = namespace(KARMADA_NAMESPACE, host, self, "baseline")

        load_balancer = args.load_balancer(self, f"{host.name}-karmada-apiserver")
        static_ip = load_balancer.address
        self.certificates = KarmadaCertificates(
            f"{host.name}-karmada",
            KarmadaCertificatesArgs(
                server_dns_names=server_dns_names(load_balancer),
                server_ip_addresses=pulumi.Output.all("127.0.0.1", *([static_ip] if static_ip is not None else [])),
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        release = self.release = helm_release(
            RELEASE,
            CHARTS["karmada"],
            host,
            ns,
            host_values(region, args.production, self.certificates),
            parent=self,
            secret_values=host_secret_values(self.certificates),
        )
        if args.production:
            # The chart renders no budget for its etcd: a node drain (a system pool's roll) takes at most one member,
            # so the other two keep the quorum.
            k8s.policy.v1.PodDisruptionBudget(
                f"{host.name}-karmada-etcd",
                metadata={"name": "etcd", "namespace": KARMADA_NAMESPACE},
                spec={"maxUnavailable": 1, "selector": {"matchLabels": ETCD_POD_LABELS}},
                opts=pulumi.ResourceOptions(parent=self, provider=host.provider, depends_on=[release]),
            )
        webhook_flags = k8s.apps.v1.DeploymentPatch(
            f"{host.name}-karmada-webhook-flags",
            metadata={
                "name": f"{RELEASE}-webhook",
                "namespace": KARMADA_NAMESPACE,
                "annotations": chart_patch_skips("karmada", f"{RELEASE}-webhook", "container args"),
            },
            spec={"template": {"spec": {"containers": [{"name": f"{RELEASE}-webhook", "args": WEBHOOK_FLAGS}]}}},
            opts=pulumi.ResourceOptions(parent=self, provider=host.provider, depends_on=[release]),
        )
        service = k8s.core.v1.Service(
            f"{host.name}-karmada-apiserver-external",
            metadata={
                "name": EXTERNAL_SERVICE,
                "namespace": KARMADA_NAMESPACE,
                "annotations": dict(load_balancer.annotations),
            },
            spec={
                "type": "LoadBalancer",
                "selector": API_SERVER_LABELS,
                "ports": [{"name": "https", "port": API_PORT, "targetPort": API_PORT, "protocol": "TCP"}],
                "loadBalancerSourceRanges": args.allowed_sources,
                **({"loadBalancerIP": static_ip} if static_ip is not None else {}),
            },
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=host.provider,
                depends_on=[release],
                ignore_changes=["spec.loadBalancerSourceRanges"] if args.allowlist_applied_elsewhere else None,
            ),
        )
        address = (
            static_ip
            if static_ip is not None
            else service.status.apply(lambda status: status.load_balancer.ingress[0].hostname)
        )
        self.endpoint = pulumi.Output.concat("https://", address, f":{API_PORT}")
        certs = self.certificates
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(self.endpoint, certs.ca.cert_pem, certs.server.cert_pem, certs.server.key_pem).apply(
                lambda a: client_kubeconfig(karmada_name(args.stack), *a)
            )
        )
        # The provider reaches its API once, when configured (PULUMI_KUBERNETES_REACHES_ITS_CLUSTER_AT_CONFIGURE): a
        # load balancer created minutes earlier must answer first.
        reachable = command.local.Command(
            f"{host.name}-karmada-apiserver-reachable",
            create=REACHABLE_SCRIPT,
            interpreter=["/bin/sh", "-c"],
            environment={"KARMADA_ENDPOINT": self.endpoint, "KARMADA_CA": certs.ca.cert_pem},
            triggers=[self.endpoint],
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=command.Provider(f"{host.name}-command", opts=pulumi.ResourceOptions(parent=self)),
                depends_on=[release, service, webhook_flags],
            ),
        )
        ready = [release, service, webhook_flags, reachable]
        provider = kubernetes_provider(karmada_name(args.stack), self.kubeconfig, self, ready)
        self.api = ClusterHandle(
            name=karmada_name(args.stack),
            region=region,
            provider=provider,
            kubeconfig=self.kubeconfig,
            endpoint=self.endpoint,
            ready=ready,
        )
        self.agent_certificates = {
            cluster: signed_certificate(
                f"{cluster}-karmada-agent",
                certs.ca,
                self,
                common_name=AGENT_USER_PREFIX + cluster,
                organization=AGENT_GROUP,
                validity_hours=AGENT_VALIDITY_HOURS,
            )
            for cluster in args.agents
        }
        self.register_outputs({"endpoint": self.endpoint})
