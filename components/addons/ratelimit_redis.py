"""Redis for Envoy Gateway's global rate limiter: the tenants' token and request counters.

Counters live for their window, up to an hour (`tenants[].budget.*.per`): a Redis that restarted
empty would hand every tenant a fresh hour of budget. So the append-only file persists every write
(fsync each second) on a volume that outlives the pod, and a restart reloads the counters. Only the
rate-limit pods may reach it (NetworkPolicy), and they authenticate: a generated password, held in a
Secret both sides read (Redis's `requirepass`, the rate limiter's REDIS_AUTH). For counters that
survive a zone loss, point `gateway.redis.url` at a managed Redis instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random

from components.catalog.charts import REDIS_IMAGE
from components.catalog.regions import BUILTIN_STORAGE_CLASS
from components.k8s.cluster import ClusterHandle
from components.k8s.names import (
    ENVOY_GATEWAY_NAMESPACE,
    PINNED_IMAGE_SKIPS,
    RATELIMIT_REDIS,
    RATELIMIT_REDIS_LABELS,
    checkov_skips,
)

PORT = 6379
UID = 999  # the `redis` user of the official image
# Checkov's checks this pod fails by design, with why (checkov.io/skip annotations).
REDIS_CHECKOV_SKIPS = checkov_skips(
    {
        **PINNED_IMAGE_SKIPS,
        "CKV_K8S_35": "redis-server takes its password on the command line (--requirepass), from this variable",
        "CKV_K8S_40": "the redis image's own user owns its data directory; non-root, no privilege escalation",
    }
)
# Envoy Gateway's rate-limit pods (envoyproxy/gateway:internal/infrastructure/kubernetes/ratelimit).
RATELIMIT_POD_LABELS = {"app.kubernetes.io/name": "envoy-ratelimit", "app.kubernetes.io/managed-by": "envoy-gateway"}
RATELIMIT_CONTAINER = "envoy-ratelimit"  # its container (ratelimit/resource.go InfraName)
MAX_MEMORY_MB = 200  # below the container's memory limit; counters expire by TTL first
AUTH_SECRET = f"{RATELIMIT_REDIS}-auth"
AUTH_KEY = "password"
PASSWORD_LENGTH = 40
DATA_SIZE = "1Gi"  # the append-only file of at most MAX_MEMORY_MB of counters, rewritten as it grows


def auth_env(name: str) -> dict[str, Any]:
    """An environment variable holding the Redis password, from its Secret."""
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": AUTH_SECRET, "key": AUTH_KEY}}}


@dataclass(frozen=True, kw_only=True)
class RateLimitRedisArgs:
    cluster: ClusterHandle
    namespace: k8s.core.v1.Namespace  # Envoy Gateway's, next to the rate limiter


class RateLimitRedis(pulumi.ComponentResource):
    url: str
    # The rate limiter's container env (Envoy Gateway's rateLimitDeployment) that authenticates it.
    client_env: list[dict[str, Any]]

    def __init__(self, name: str, args: RateLimitRedisArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:RateLimitRedis", name, None, opts)
        cluster = args.cluster
        on_cluster = pulumi.ResourceOptions(
            parent=self, provider=cluster.provider, depends_on=[*cluster.ready, args.namespace]
        )
        meta = {"name": RATELIMIT_REDIS, "namespace": ENVOY_GATEWAY_NAMESPACE, "labels": RATELIMIT_REDIS_LABELS}
        password = random.RandomPassword(
            f"{cluster.name}-{RATELIMIT_REDIS}",
            length=PASSWORD_LENGTH,
            special=False,
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=random.Provider(f"{cluster.name}-{RATELIMIT_REDIS}", opts=pulumi.ResourceOptions(parent=self)),
            ),
        )
        secret = k8s.core.v1.Secret(
            f"{cluster.name}-{AUTH_SECRET}",
            metadata={**meta, "name": AUTH_SECRET},
            string_data={AUTH_KEY: password.result},
            opts=on_cluster,
        )
        data = k8s.core.v1.PersistentVolumeClaim(
            f"{cluster.name}-{RATELIMIT_REDIS}",
            metadata={**meta, "annotations": REDIS_CHECKOV_SKIPS},
            spec={
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": BUILTIN_STORAGE_CLASS[cluster.cloud],
                "resources": {"requests": {"storage": DATA_SIZE}},
            },
            opts=on_cluster,
        )
        k8s.apps.v1.Deployment(
            f"{cluster.name}-{RATELIMIT_REDIS}",
            metadata={**meta, "annotations": REDIS_CHECKOV_SKIPS},
            spec={
                "replicas": 1,
                "strategy": {"type": "Recreate"},  # one pod at a time holds the volume
                "selector": {"matchLabels": RATELIMIT_REDIS_LABELS},
                "template": {
                    "metadata": {"labels": RATELIMIT_REDIS_LABELS},
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
                                    *("--save", ""),  # no RDB snapshots: the append-only file is the record
                                    *("--appendonly", "yes"),
                                    *("--appendfsync", "everysec"),  # at most a second of counts lost
                                    *("--dir", "/data"),
                                    *("--maxmemory", f"{MAX_MEMORY_MB}mb"),
                                    *("--maxmemory-policy", "volatile-ttl"),
                                    *("--requirepass", "$(REDIS_PASSWORD)"),  # Kubernetes expands it
                                ],
                                # REDISCLI_AUTH: redis-cli's password, for the readiness probe.
                                "env": [auth_env("REDIS_PASSWORD"), auth_env("REDISCLI_AUTH")],
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
                        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": RATELIMIT_REDIS}}],
                    },
                },
            },
            opts=pulumi.ResourceOptions.merge(on_cluster, pulumi.ResourceOptions(depends_on=[secret, data])),
        )
        k8s.core.v1.Service(
            f"{cluster.name}-{RATELIMIT_REDIS}",
            metadata={**meta, "annotations": REDIS_CHECKOV_SKIPS},
            spec={"selector": RATELIMIT_REDIS_LABELS, "ports": [{"name": "redis", "port": PORT, "targetPort": PORT}]},
            opts=on_cluster,
        )
        k8s.networking.v1.NetworkPolicy(
            f"{cluster.name}-{RATELIMIT_REDIS}",
            metadata={**meta, "annotations": REDIS_CHECKOV_SKIPS},
            spec={
                "podSelector": {"matchLabels": RATELIMIT_REDIS_LABELS},
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
        self.url = f"{RATELIMIT_REDIS}.{ENVOY_GATEWAY_NAMESPACE}.svc.cluster.local:{PORT}"
        self.client_env = [auth_env("REDIS_AUTH")]
        self.register_outputs({"url": self.url})
