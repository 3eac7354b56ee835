"""ExternalDNS on a gateway's cluster: it publishes the gateway routes' hostname (`gateway.dns.publisher: externalDns`).

Nothing in Kubernetes or Envoy Gateway publishes `<region>.<gateway.domain>` (DNS_NAME_PUBLISHED,
components/catalog/bringup.py); the load balancer's address appears only in the Gateway's status. ExternalDNS's
`gateway-httproute` source reads the HTTPRoutes attached to a Gateway (the AI Gateway generates them from its
AIGatewayRoutes, with their hostnames) and the Gateway's addresses, and upserts the records into the zone its
cloud identity may write: the domain's public zone for a public gateway, a private zone of the region's network for
an internal one. One replica (a single writer; its TXT records mark what it owns), on the system pool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.catalog.charts import EXTERNAL_DNS_IMAGE
from components.k8s.cluster import ClusterHandle
from components.k8s.helm import namespace
from components.k8s.names import ENVOY_GATEWAY_NAMESPACE, checkov_skips
from components.k8s.topology import pool_selector
from components.serving.network_policies import default_deny

NAMESPACE = "external-dns"
NAME = "external-dns"
METRICS_PORT = 7979  # --metrics-address default: /healthz and /metrics
# What the gateway-httproute source reads (kubernetes-sigs/external-dns@v0.15.1:docs/sources/gateway-api.md L46-56).
RULES = [
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "watch", "list"]},
    {
        "apiGroups": ["gateway.networking.k8s.io"],
        "resources": ["gateways", "httproutes"],
        "verbs": ["get", "watch", "list"],
    },
]
LABELS = {"app.kubernetes.io/name": NAME}
# Checkov's CKV_K8S_38 (no ServiceAccount token) fails by design: the source reads the API with the token.
TOKEN_SKIP = checkov_skips(
    {
        "CKV_K8S_38": "its gateway-httproute source reads Gateways, HTTPRoutes and Namespaces from the API server with "
        "this token (ClusterRole external-dns)"
    }
)


def external_dns_args(
    domain_filter: str | None, owner: str, cloud_flags: Sequence[pulumi.Input[str]]
) -> list[pulumi.Input[str]]:
    """Flags of external-dns v0.15.1 (pkg/apis/externaldns/types.go L425-596): the routes of the gateways in
    envoy-gateway-system only, names under `domain_filter` (none: every name of those routes), records it owns
    marked by TXT, never deleting what it did not create. Which zone it writes to is the cloud flags' choice
    (EXTERNAL_DNS_KEEPS_A_ZONE, components/catalog/bringup.py)."""
    return [
        "--source=gateway-httproute",
        f"--gateway-namespace={ENVOY_GATEWAY_NAMESPACE}",
        *([f"--domain-filter={domain_filter}"] if domain_filter else []),
        "--registry=txt",
        f"--txt-owner-id={owner}",
        "--policy=upsert-only",
        "--interval=1m",
        *cloud_flags,
    ]


@dataclass(frozen=True, kw_only=True)
class ExternalDnsArgs:
    cluster: ClusterHandle
    hostname: str
    label_domain: str
    domain_filter: str | None  # --domain-filter, when the cloud's zone selection allows one
    cloud_flags: tuple[pulumi.Input[str], ...]  # --provider and its zone filters
    identity: Mapping[str, pulumi.Input[str]]  # the service account's cloud identity annotation
    env: Mapping[str, str]  # e.g. the AWS region the provider calls
    gateway: pulumi.Resource  # Envoy Gateway's release: the Gateway API kinds it reads


class ExternalDns(pulumi.ComponentResource):
    deployment: k8s.apps.v1.Deployment

    def __init__(self, name: str, args: ExternalDnsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:ExternalDns", name, None, opts)
        cluster = args.cluster
        ns = namespace(NAMESPACE, cluster, self, "restricted")
        on_cluster = pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[*cluster.ready, ns])
        account = k8s.core.v1.ServiceAccount(
            f"{cluster.name}-{NAME}",
            metadata={"name": NAME, "namespace": NAMESPACE, "annotations": dict(args.identity)},
            opts=on_cluster,
        )
        role = k8s.rbac.v1.ClusterRole(f"{cluster.name}-{NAME}", metadata={"name": NAME}, rules=RULES, opts=on_cluster)
        binding = k8s.rbac.v1.ClusterRoleBinding(
            f"{cluster.name}-{NAME}",
            metadata={"name": NAME},
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME},
            subjects=[{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}],
            opts=pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=[role])),
        )
        health = {"httpGet": {"path": "/healthz", "port": METRICS_PORT}}
        self.deployment = k8s.apps.v1.Deployment(
            f"{cluster.name}-{NAME}",
            metadata={"name": NAME, "namespace": NAMESPACE, "labels": LABELS, "annotations": TOKEN_SKIP},
            spec={
                "replicas": 1,
                "strategy": {"type": "Recreate"},  # one writer at a time
                "selector": {"matchLabels": LABELS},
                "template": {
                    "metadata": {"labels": LABELS},
                    "spec": {
                        "serviceAccountName": NAME,
                        "nodeSelector": pool_selector(args.label_domain, "system"),
                        "securityContext": {
                            "runAsNonRoot": True,
                            "runAsUser": 65534,
                            "fsGroup": 65534,  # the projected web-identity token readable by the process
                            "seccompProfile": {"type": "RuntimeDefault"},
                        },
                        "containers": [
                            {
                                "name": NAME,
                                "image": EXTERNAL_DNS_IMAGE,
                                "args": external_dns_args(args.domain_filter, cluster.name, args.cloud_flags),
                                "env": [{"name": k, "value": v} for k, v in sorted(args.env.items())],
                                "ports": [{"name": "http", "containerPort": METRICS_PORT}],
                                "readinessProbe": {**health, "periodSeconds": 10},
                                "livenessProbe": {**health, "periodSeconds": 30, "failureThreshold": 3},
                                "resources": {
                                    "requests": {"cpu": "50m", "memory": "64Mi"},
                                    "limits": {"cpu": "200m", "memory": "256Mi"},
                                },
                                "securityContext": {
                                    "allowPrivilegeEscalation": False,
                                    "readOnlyRootFilesystem": True,
                                    "capabilities": {"drop": ["ALL"]},
                                },
                            }
                        ],
                    },
                },
            },
            opts=pulumi.ResourceOptions.merge(
                on_cluster, pulumi.ResourceOptions(depends_on=[account, binding, args.gateway])
            ),
        )
        # Nothing calls ExternalDNS (it only calls out: the API server and the DNS API); kubelet probes are not
        # subject to NetworkPolicy.
        deny = default_deny(NAMESPACE)
        k8s.networking.v1.NetworkPolicy(
            f"{cluster.name}-{NAME}-default-deny", metadata=deny["metadata"], spec=deny["spec"], opts=on_cluster
        )
        self.register_outputs({"hostname": args.hostname})
