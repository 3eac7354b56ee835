"""Names several capabilities agree on: namespaces, service accounts, buckets, labels.

The names the policy pack recognises too (the serving and privileged namespaces, the annotation prefix, ...) are
platform_catalog/names.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from platform_catalog.names import annotation

if TYPE_CHECKING:
    from components.config.region import RegionSpec

# Model servers run under this service account (in platform_catalog.names.SERVING_NAMESPACE); the model
# store grants it read access (IRSA / Workload Identity) and the cache mounts into it.
MODEL_SERVER_SERVICE_ACCOUNT = "model-server"


def checkov_skips(reasons: dict[str, str]) -> dict[str, str]:
    """Checkov's skip annotations (`checkov.io/skip<n>: <check>=<reason>`, checkov 3.3.30
    kubernetes/kubernetes_utils.py) for the checks an object fails by design, each with why."""
    split = sorted(check for check, reason in reasons.items() if "=" in reason)
    if split:
        raise ValueError(f"Checkov splits a skip annotation on '=': reword the reason of {', '.join(split)}")
    return {f"checkov.io/skip{i}": f"{check}={reason}" for i, (check, reason) in enumerate(sorted(reasons.items()), 1)}


# Why images are not pulled Always or by digest (Checkov CKV_K8S_15, CKV_K8S_43), for every pod we render.
PINNED_IMAGE_SKIPS = {
    "CKV_K8S_15": "pinned by version tag from components/catalog (k8s-images-pinned refuses latest and untagged); "
    "IfNotPresent reuses the node's copy of that exact tag",
    "CKV_K8S_43": "pinned by version tag from components/catalog, which records no digest for this image",
}


def cluster_name(stack: str, region: RegionSpec) -> str:
    """A region entry's Kubernetes cluster (and its provider, and its Karmada member name): the one it
    creates, `<environment>-<region>`, or the existing cluster it builds on."""
    existing = region.cluster.existing
    return existing.name if existing is not None else f"{stack}-{region.name}"


def model_bucket_name(prefix: str, stack: str, region_name: str) -> str:
    """Globally unique enough per account: the configured prefix, environment and region entry."""
    return f"{prefix}-{stack}-{region_name}-models"


# Model-server pods (set on them by the KServe capability): selected by the PodMonitors and,
# as target labels, by dashboards and alerts. Independent of the node-label domain.
PART_OF_LABEL = "app.kubernetes.io/part-of"
PLATFORM_PART_OF = "inference-platform"
MODEL_LABEL = annotation("model")


def model_pod_labels(model: str) -> dict[str, str]:
    """The labels every server pod of `model` carries."""
    return {PART_OF_LABEL: PLATFORM_PART_OF, MODEL_LABEL: model}


# Ports the model-server containers declare (a PodMonitor's portNumber only matches declared
# ports): vLLM serves /metrics on its HTTP port (KServe runtime `--port=8080`); so does Triton's
# OpenAI frontend, which runs the Triton core in-process and has no separate metrics listener
# (components/catalog/engines.py; tritonserver's own 8002 is not started).
VLLM_METRICS_PORT = 8080
TRITON_METRICS_PORT = 8080

# Tenant identity on gateway requests, and the OpenTelemetry attribute the AI Gateway maps it
# to in its metrics (`controller.metricsRequestHeaderAttributes: "x-tenant-id:tenant.id"`).
TENANT_HEADER = "x-tenant-id"
TENANT_METRIC_ATTRIBUTE = "tenant.id"

# kube-prometheus-stack's namespace (the monitoring add-on), which NetworkPolicies let scrape model servers.
MONITORING_NAMESPACE = "monitoring"

# Target labels the scrape configs add by relabeling, which dashboards, alerts and autoscalers select on.
POOL_TARGET_LABEL = "pool"  # from the node label <domain>/pool (DESIGN.md §4)
MODEL_TARGET_LABEL = "platform_model"  # from the pod label MODEL_LABEL (not `model`: Triton has one)

# Envoy Gateway's namespace (FACTS.md chart table; its proxies run there too), and the one
# OpenAI-compatible Gateway per cluster that the AI Gateway routes and KServe attach to.
ENVOY_GATEWAY_NAMESPACE = "envoy-gateway-system"
GATEWAY_NAME = "inference-gateway"
# The rate limiter's Redis there, which the gateway namespace's NetworkPolicies single out.
RATELIMIT_REDIS = "ratelimit-redis"
RATELIMIT_REDIS_LABELS = {"app.kubernetes.io/name": RATELIMIT_REDIS, "app.kubernetes.io/component": "ratelimit-backend"}
