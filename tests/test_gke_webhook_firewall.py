"""A private GKE cluster's API server reaches every webhook and aggregated API we install (GKE_CONTROL_PLANE_FIREWALL):
the nodes' firewall opens each backend port of every release on the cluster, from the control plane's range only,
and no NetworkPolicy we render shuts that range out of a backend's namespace."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from components.catalog.charts import CHARTS
from components.catalog.upstream import FACTS, GKE_CONTROL_PLANE_FIREWALL
from components.catalog.webhooks import API_SERVER_BACKENDS, ApiServerBackend
from tests.harness import cluster_objects

GKE_CLUSTER = "gcp:container/cluster:Cluster"
FIREWALL = "gcp:compute/firewall:Firewall"
NODE_POOL = "gcp:container/nodePool:NodePool"
VENDORED = Path(__file__).resolve().parent.parent / "conformance" / "upstream"

# What GKE's own rule opens (the private-clusters doc; cert-manager v1.21.1 values.yaml L1086-1089 says the same).
GKE_DEFAULT_PORTS = {443, 10250}
# prod-usc1's control-plane range, as Pulumi.prod.usc1.yaml gives it (regions[].network.controlPlaneCidr).
PROD_USC1_CONTROL_PLANE = "172.16.0.0/28"
# The ports read from the charts at their pins (components/catalog/webhooks.py cites each): KEDA's metrics
# APIService 6443, Volcano's admission 8443, the 9443 of KServe, llmisvc, Envoy Gateway, AI Gateway, KEDA, Fluid.
PROD_USC1_EXTRA_PORTS = {6443, 8443, 9443}


def _gke_clusters(plan) -> list[str]:
    return [r.inputs["name"] for r in plan.resources if r.type == GKE_CLUSTER]


def _releases(plan, cluster: str) -> list[dict]:
    return [r.inputs for r in plan.helm_releases() if plan.cluster_of(r) == cluster]


def _chart(release: dict) -> tuple[str, str]:
    return release["chart"].rsplit("/", 1)[-1], release["version"]


def _backend_ports(plan, cluster: str) -> dict[int, list[str]]:
    """Port -> the releases whose API-server backends listen on it, with the values the plan gives each release."""
    ports: dict[int, list[str]] = {}
    for release in _releases(plan, cluster):
        for backend in API_SERVER_BACKENDS[_chart(release)]:
            ports.setdefault(backend.port_with(release.get("values") or {}), []).append(release["name"])
    return ports


def _firewall(plan, cluster: str):
    (rule,) = [
        r for r in plan.resources if r.type == FIREWALL and r.inputs.get("name") == f"{cluster}-control-plane-webhooks"
    ]
    return rule.inputs


def _opened(rule: dict) -> set[int]:
    return {int(p) for allow in rule["allows"] if allow["protocol"] == "tcp" for p in allow["ports"]}


def test_every_release_on_a_gke_cluster_has_been_read_for_webhooks(prod_plan):
    """A chart bump (or a new chart) has no entry until its templates are read at the new tag."""
    assert GKE_CONTROL_PLANE_FIREWALL.name in FACTS
    clusters = _gke_clusters(prod_plan)
    assert clusters == ["prod-usc1"]
    for cluster in clusters:
        unread = [_chart(r) for r in _releases(prod_plan, cluster) if _chart(r) not in API_SERVER_BACKENDS]
        assert not unread, f"{cluster}: read these charts' webhooks/APIServices into components/catalog/webhooks.py"


def test_the_nodes_firewall_opens_every_webhook_and_apiservice_port_from_the_control_plane(prod_plan):
    assert _gke_clusters(prod_plan) == ["prod-usc1"]
    for cluster in _gke_clusters(prod_plan):
        rule = _firewall(prod_plan, cluster)
        needed = _backend_ports(prod_plan, cluster)
        missing = {p: who for p, who in needed.items() if p not in _opened(rule) | GKE_DEFAULT_PORTS}
        assert not missing, f"{cluster}: the API server cannot reach {missing}"
        assert set(needed) - GKE_DEFAULT_PORTS == PROD_USC1_EXTRA_PORTS
        assert _opened(rule) == PROD_USC1_EXTRA_PORTS  # nothing more than the backends
        assert rule["direction"] == "INGRESS"
        assert rule["sourceRanges"] == [PROD_USC1_CONTROL_PLANE]
        # Every pool of the cluster (system and GPU) runs as an account the rule targets.
        pools = [r.inputs for r in prod_plan.resources if r.type == NODE_POOL and r.name.startswith("usc1-")]
        assert len(pools) >= 2
        for pool in pools:
            assert pool["nodeConfig"]["serviceAccount"] in rule["targetServiceAccounts"], pool["name"]


def test_a_release_moving_its_webhook_port_fails_the_coverage(prod_plan):
    """Near variant: the check reads the port from the values the plan gives, not from the chart's default."""
    (keda,) = [r for r in _releases(prod_plan, "prod-usc1") if _chart(r)[0] == "keda"]
    moved = {**(keda.get("values") or {}), "webhooks": {"port": 9444}}
    ports = {b.port_with(moved) for b in API_SERVER_BACKENDS[_chart(keda)]}
    assert 9444 in ports and 9444 not in _opened(_firewall(prod_plan, "prod-usc1"))


@pytest.mark.parametrize(
    ("chart", "backend"),
    [(chart, b) for (chart, _), backends in API_SERVER_BACKENDS.items() for b in backends if b.value],
    ids=lambda v: v if isinstance(v, str) else v.value,
)
def test_each_port_default_is_the_charts_own(chart: str, backend: ApiServerBackend):
    """The default stated in the catalog is the chart's values.yaml at the pin (KEDA's `webhooks.port` is "",
    the template's `default 9443`)."""
    values = yaml.safe_load((VENDORED / CHARTS[chart].upstream_values).read_text())
    assert backend.port_with(values) == backend.port


def test_no_network_policy_shuts_the_control_plane_out_of_a_backend_namespace(prod_plan):
    """Dataplane V2 enforces NetworkPolicies: a namespace with a policy must admit the control-plane range on its
    backends' ports (Envoy Gateway's: an ipBlock of the region's webhook source range)."""
    policies = [p for (cluster, _), p in cluster_objects(prod_plan, "NetworkPolicy").items() if cluster == "prod-usc1"]
    by_namespace: dict[str, list[dict]] = {}
    for p in policies:
        by_namespace.setdefault(p["metadata"]["namespace"], []).append(p)
    checked = []
    for release in _releases(prod_plan, "prod-usc1"):
        namespace = release["namespace"]
        for backend in API_SERVER_BACKENDS[_chart(release)]:
            if namespace not in by_namespace:
                continue
            port = backend.port_with(release.get("values") or {})
            admitted = [
                rule
                for p in by_namespace[namespace]
                for rule in p["spec"].get("ingress", [])
                if {"ipBlock": {"cidr": PROD_USC1_CONTROL_PLANE}} in rule.get("from", [])
                and port in [r["port"] for r in rule.get("ports", [])]
            ]
            assert admitted, f"{namespace}: nothing admits the control plane on {port} ({backend.serves})"
            checked.append((namespace, port))
    assert checked == [("envoy-gateway-system", 9443)]
