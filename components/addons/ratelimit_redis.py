"""Redis for Envoy Gateway's global rate limiter: the tenants' token and request counters.

Counters only live for their window (a minute or an hour), so persistence is off: a restart forgets
at most one window of usage. Only the rate-limit pods may reach it (NetworkPolicy). For counters
that survive a node loss, point `gateway.redis.url` at a managed Redis instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.catalog.charts import REDIS_IMAGE
from components.k8s.cluster import ClusterHandle
from components.k8s.names import ENVOY_GATEWAY_NAMESPACE

NAME = "ratelimit-redis"
PORT = 6379
UID = 999  # the `redis` user of the official image
LABELS = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": "ratelimit-backend"}
# Envoy Gateway's rate-limit pods (envoyproxy/gateway:internal/infrastructure/kubernetes/ratelimit).
RATELIMIT_POD_LABELS = {"app.kubernetes.io/name": "envoy-ratelimit", "app.kubernetes.io/managed-by": "envoy-gateway"}
MAX_MEMORY_MB = 200  # below the container's memory limit; counters expire by TTL first


@dataclass(frozen=True)
class RateLimitRedisArgs:
    cluster: ClusterHandle
    namespace: k8s.core.v1.Namespace  # Envoy Gateway's, next to the rate limiter


class RateLimitRedis(pulumi.ComponentResource):
    url: str

    def __init__(self, name: str, args: RateLimitRedisArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:RateLimitRedis", name, None, opts)
        cluster = args.cluster
        on_cluster = pulumi.ResourceOptions(
            parent=self, provider=cluster.provider, depends_on=[*cluster.ready, args.namespace]
        )
        meta = {"name": NAME, "namespace": ENVOY_GATEWAY_NAMESPACE, "labels": LABELS}
        k8s.apps.v1.Deployment(
            f"{cluster.name}-{NAME}",
            metadata=meta,
            spec={
                "replicas": 1,
                "selector": {"matchLabels": LABELS},
                "template": {
                    "metadata": {"labels": LABELS},
                    "spec": {
                        "automountServiceAccountToken": False,
                        "securityContext": {
                            "runAsNonRoot": True,
                            "runAsUser": UID,
                            "runAsGroup": UID,
                            "fsGroup": UID,
                            "seccompProfile": {"type": "RuntimeDefault"},
                        },
                        "containers": [
                            {
                                "name": "redis",
                                "image": REDIS_IMAGE,
                                "command": ["redis-server"],
                                "args": [
                                    *("--save", ""),  # no RDB snapshots
                                    *("--appendonly", "no"),  # no AOF
                                    *("--maxmemory", f"{MAX_MEMORY_MB}mb"),
                                    *("--maxmemory-policy", "volatile-ttl"),
                                    *("--protected-mode", "no"),  # reachable from the rate limiter's pods
                                ],
                                "ports": [{"name": "redis", "containerPort": PORT}],
                                "readinessProbe": {"exec": {"command": ["redis-cli", "ping"]}, "periodSeconds": 5},
                                "livenessProbe": {
                                    "tcpSocket": {"port": PORT},
                                    "initialDelaySeconds": 10,
                                    "periodSeconds": 10,
                                },
                                "resources": {
                                    "requests": {"cpu": "100m", "memory": "128Mi"},
                                    "limits": {"cpu": "500m", "memory": "256Mi"},
                                },
                                "securityContext": {
                                    "allowPrivilegeEscalation": False,
                                    "readOnlyRootFilesystem": True,
                                    "capabilities": {"drop": ["ALL"]},
                                },
                                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                            }
                        ],
                        "volumes": [{"name": "data", "emptyDir": {"sizeLimit": "64Mi"}}],
                    },
                },
            },
            opts=on_cluster,
        )
        k8s.core.v1.Service(
            f"{cluster.name}-{NAME}",
            metadata=meta,
            spec={"selector": LABELS, "ports": [{"name": "redis", "port": PORT, "targetPort": PORT}]},
            opts=on_cluster,
        )
        k8s.networking.v1.NetworkPolicy(
            f"{cluster.name}-{NAME}",
            metadata=meta,
            spec={
                "podSelector": {"matchLabels": LABELS},
                "policyTypes": ["Ingress"],
                "ingress": [
                    {
                        "from": [{"podSelector": {"matchLabels": RATELIMIT_POD_LABELS}}],
                        "ports": [{"protocol": "TCP", "port": PORT}],
                    }
                ],
            },
            opts=on_cluster,
        )
        self.url = f"{NAME}.{ENVOY_GATEWAY_NAMESPACE}.svc.cluster.local:{PORT}"
        self.register_outputs({"url": self.url})
