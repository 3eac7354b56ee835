"""Who may reach the model servers: the gateway's Envoy, the model's endpoint picker and Prometheus, no one else.

A pod that could call a model server directly would bypass the gateway's API keys and token budgets.
So the serving namespace denies all ingress by default, and each allowance names its peer by pod
labels (never by IP block, which some CNIs match against pod IPs):
- every pod: Prometheus on the metrics ports (model servers' 8080, pickers' 9090);
- a model's server pods: its picker (which scrapes their /metrics) and the Gateway's Envoy proxies on
  8080; the model's own pods on any port (Ray between a multi-node replica's head and workers);
  Knative's activator where the region runs Knative mode;
- a model's picker: the Gateway's Envoy proxies on its ext_proc port.
The rate-limit Redis has its own policy (`components/addons/ratelimit_redis.py`), and Envoy
Gateway's namespace its own default deny (`gateway_namespace_policies`).

Enforcement: EKS's VPC CNI enforces NetworkPolicies once its addon sets `enableNetworkPolicy`
(`components/aws/eks.py`); GKE's Dataplane V2 (`ADVANCED_DATAPATH`) always does.
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Any, Literal

from components.catalog.peers import (
    ENVOY_GATEWAY_CONTROLLER_LABELS,
    ENVOY_GATEWAY_WEBHOOK_PORT,
    ENVOY_PROXY_LABELS,
    ENVOY_WELL_KNOWN_PORT_SHIFT,
    KNATIVE_ACTIVATOR,
    NAMESPACE_NAME_LABEL,
    OWNING_GATEWAY_LABEL,
    PROMETHEUS_POD_LABELS,
)
from components.config.observability import ObservabilitySpec
from components.config.region import RegionSpec
from components.k8s import names
from platform_catalog.names import SERVING_NAMESPACE

API_VERSION = "networking.k8s.io/v1"
REDIS_NAME_LABEL = "app.kubernetes.io/name"
REDIS_NAME = names.RATELIMIT_REDIS_LABELS[REDIS_NAME_LABEL]
DEFAULT_DENY = "default-deny-ingress"


def picker_pods(model: str) -> dict[str, str]:
    """The labels a model's endpoint-picker pods are selected by (its Deployment, Service and policies)."""
    return {"inferencepool": f"{model}-epp"}


def _in_namespace(namespace: str, pods: dict[str, str] | None = None) -> dict[str, Any]:
    peer: dict[str, Any] = {"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: namespace}}}
    if pods:
        peer["podSelector"] = {"matchLabels": pods}
    return peer


def _tcp(*ports: int) -> list[dict[str, Any]]:
    return [{"protocol": "TCP", "port": port} for port in ports]


def envoy_peer() -> dict[str, Any]:
    """The proxies of the platform's one Gateway per cluster."""
    return _in_namespace(
        names.ENVOY_GATEWAY_NAMESPACE, {**ENVOY_PROXY_LABELS, OWNING_GATEWAY_LABEL: names.GATEWAY_NAME}
    )


def prometheus_namespace(obs: ObservabilitySpec) -> str | None:
    """The namespace of the Prometheus that scrapes the region's monitors: the one observability installs, or the
    existing one; None when nothing scrapes."""
    if not obs.enabled:
        return None
    return obs.existing_prometheus.namespace if obs.existing_prometheus is not None else names.MONITORING_NAMESPACE


def prometheus_peer(namespace: str | None) -> dict[str, Any] | None:
    """The Prometheus pods in `namespace` (`prometheus_namespace`); None when nothing scrapes."""
    return None if namespace is None else _in_namespace(namespace, PROMETHEUS_POD_LABELS)


def policy(
    name: str, namespace: str, pods: dict[str, str] | dict[str, Any], ingress: list[dict[str, Any]]
) -> dict[str, Any]:
    """An ingress policy for the pods matching `pods` (labels, or a full label selector)."""
    selector = pods if "matchExpressions" in pods else {"matchLabels": pods}
    return {
        "apiVersion": API_VERSION,
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"podSelector": selector, "policyTypes": ["Ingress"], "ingress": ingress},
    }


def default_deny(namespace: str) -> dict[str, Any]:
    """Every pod of `namespace` takes ingress only from what another policy allows."""
    return policy(DEFAULT_DENY, namespace, {}, [])


def serving_namespace_policies(prometheus_ns: str | None, metrics_ports: tuple[int, ...]) -> list[dict[str, Any]]:
    """Default deny in the serving namespace, and the Prometheus of `prometheus_ns` on the metrics ports of its pods."""
    policies = [default_deny(SERVING_NAMESPACE)]
    prometheus = prometheus_peer(prometheus_ns)
    if prometheus is not None:
        policies.append(
            policy("allow-prometheus", SERVING_NAMESPACE, {}, [{"from": [prometheus], "ports": _tcp(*metrics_ports)}])
        )
    return policies


def model_server_policy(
    deployment_mode: Literal["Standard", "Knative"], model: str, server_port: int, picker_pods: dict[str, str] | None
) -> dict[str, Any]:
    """Ingress to one model's server pods: the Gateway's Envoy and its picker (when it has a gateway), its own pods."""
    pods = names.model_pod_labels(model)
    callers = []
    if picker_pods is not None:
        callers += [envoy_peer(), {"podSelector": {"matchLabels": picker_pods}}]
    if deployment_mode == "Knative":
        callers.append(_in_namespace(*KNATIVE_ACTIVATOR))
    ingress: list[dict[str, Any]] = [{"from": [{"podSelector": {"matchLabels": pods}}]}]
    if callers:
        ingress.insert(0, {"from": callers, "ports": _tcp(server_port)})
    return policy(f"{model}-server", SERVING_NAMESPACE, pods, ingress)


def picker_policy(model: str, picker_pods: dict[str, str], ext_proc_port: int) -> dict[str, Any]:
    """Ingress to a model's endpoint picker: the Gateway's Envoy, on ext_proc."""
    return policy(
        f"{model}-epp", SERVING_NAMESPACE, picker_pods, [{"from": [envoy_peer()], "ports": _tcp(ext_proc_port)}]
    )


def control_plane_peer(region: RegionSpec) -> dict[str, Any]:
    """Where a managed API server's webhook calls come from (MANAGED_CONTROL_PLANE_ADDRESSES in
    components/catalog/upstream.py): EKS's control-plane interfaces in the cluster's VPC, GKE's private control-plane
    range."""
    return ip_block(str(region.network.webhook_source_cidr))


def ip_block(cidr: str) -> dict[str, Any]:
    """A peer by address range: only for callers outside the pod network (a managed control plane)."""
    return {"ipBlock": {"cidr": cidr}}


def gateway_namespace_policies(
    webhook_source_cidr: IPv4Network, prometheus_ns: str | None, listener_port: int
) -> list[dict[str, Any]]:
    """Envoy Gateway's namespace: default deny; its own pods among themselves (xDS, the rate limiter, Redis),
    clients on the Envoy listener (from anywhere: the load balancer keeps their addresses), the API server on the
    controller's webhook (from `webhook_source_cidr`, the control plane's addresses: see `control_plane_peer`), the
    Prometheus of `prometheus_ns`."""
    namespace = names.ENVOY_GATEWAY_NAMESPACE
    container_port = listener_port + ENVOY_WELL_KNOWN_PORT_SHIFT if listener_port < 1024 else listener_port
    # Policies add up: these must not select the Redis, which only the rate limiter may reach.
    but_redis = {"matchExpressions": [{"key": REDIS_NAME_LABEL, "operator": "NotIn", "values": [REDIS_NAME]}]}
    policies = [
        default_deny(namespace),
        policy("allow-same-namespace", namespace, but_redis, [{"from": [{"podSelector": {}}]}]),
        policy(
            "allow-clients",
            namespace,
            {**ENVOY_PROXY_LABELS, OWNING_GATEWAY_LABEL: names.GATEWAY_NAME},
            [{"from": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": _tcp(container_port)}],
        ),
        policy(
            "allow-webhook",
            namespace,
            ENVOY_GATEWAY_CONTROLLER_LABELS,
            [{"from": [ip_block(str(webhook_source_cidr))], "ports": _tcp(ENVOY_GATEWAY_WEBHOOK_PORT)}],
        ),
    ]
    prometheus = prometheus_peer(prometheus_ns)
    if prometheus is not None:
        policies.append(policy("allow-prometheus", namespace, but_redis, [{"from": [prometheus]}]))
    return policies
