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

from components.catalog.charts import REDIS_IMAGE
from components.k8s.cluster import ClusterTarget
from components.k8s.inputs import required
from components.k8s.names import (
    ENVOY_GATEWAY_NAMESPACE,
    PINNED_IMAGE_SKIPS,
    RATELIMIT_REDIS,
    RATELIMIT_REDIS_LABELS,
    checkov_skips,
)
from components.k8s.store import SinglePodStore, single_pod_store

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
DATA_SIZE = "1Gi"  # the append-only file of at most MAX_MEMORY_MB of counters, rewritten as it grows


def auth_env(name: str) -> dict[str, Any]:
    """An environment variable holding the Redis password, from its Secret."""
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": AUTH_SECRET, "key": AUTH_KEY}}}


@dataclass(frozen=True, kw_only=True)
class RateLimitRedisArgs:
    cluster: ClusterTarget
    namespace: k8s.core.v1.Namespace  # Envoy Gateway's, next to the rate limiter
    storage_class: str  # of the Redis volume: the cluster's built-in one (catalog BUILTIN_STORAGE_CLASS)

    def __post_init__(self) -> None:
        required("storage_class", self.storage_class, "the cluster's storage class for the Redis volume, e.g. gp2")


class RateLimitRedis(pulumi.ComponentResource):
    url: str
    # The rate limiter's container env (Envoy Gateway's rateLimitDeployment) that authenticates it.
    client_env: list[dict[str, Any]]

    def __init__(self, name: str, args: RateLimitRedisArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:addons:RateLimitRedis", name, None, opts)
        store = SinglePodStore(
            name=RATELIMIT_REDIS,
            namespace=ENVOY_GATEWAY_NAMESPACE,
            labels=RATELIMIT_REDIS_LABELS,
            annotations=REDIS_CHECKOV_SKIPS,
            uid=UID,
            port=PORT,
            port_name="redis",
            storage=DATA_SIZE,
            storage_class=args.storage_class,
            password_secret=AUTH_SECRET,
            password_key=AUTH_KEY,
            container=_redis_container(),
            clients=({"podSelector": {"matchLabels": RATELIMIT_POD_LABELS}},),
        )
        single_pod_store(store, args.cluster, self, [args.namespace])
        self.url = f"{RATELIMIT_REDIS}.{ENVOY_GATEWAY_NAMESPACE}.svc.cluster.local:{PORT}"
        self.client_env = [auth_env("REDIS_AUTH")]
        self.register_outputs({"url": self.url})


def _redis_container() -> dict[str, Any]:
    return {
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
        "livenessProbe": {"tcpSocket": {"port": PORT}, "initialDelaySeconds": 10, "periodSeconds": 10},
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
    }
