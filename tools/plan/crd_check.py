"""Is every custom resource's kind installed on its cluster? An API server refuses an object of a kind no CRD (or
aggregated API) serves, so `pulumi up` would fail at that object however valid its schema.

A kind is installed on a cluster by a Helm release there (what each chart installs with the values we give it:
`components/catalog/chart_crds.py`), by a CRD file applied there (`FILE_CRDS`), by Karmada's chart in host mode for the Karmada API server it runs, or by the
platform itself: GKE serves `networking.gke.io` Network and GKENetworkParamSet on clusters with multi-networking,
and an existing Prometheus Operator (`observability.existingPrometheus`) is declared with its CRDs installed.
"""

from __future__ import annotations

from collections import defaultdict

from components.catalog.chart_crds import CHART_CRDS, FILE_CRDS, GroupKind, installed_kinds
from components.federation.control_plane import karmada_name
from components.k8s.names import cluster_name
from tools.conformance import api_group, is_custom_resource
from tools.plan.model import Plan

GKE_CLUSTER = "gcp:container/cluster:Cluster"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
# GKE's own CRDs once multi-networking is on (cloud.google.com/kubernetes-engine/docs/how-to/
# setup-multinetwork-support-for-pods; GoogleCloudPlatform/gke-networking-api@v0.2.0:config/crds, FACTS-3.md §7).
GKE_MULTI_NETWORK_KINDS = frozenset({("networking.gke.io", "Network"), ("networking.gke.io", "GKENetworkParamSet")})
PROMETHEUS_OPERATOR_KINDS = frozenset(
    ("monitoring.coreos.com", k) for k in ("PodMonitor", "ServiceMonitor", "PrometheusRule", "Probe", "ScrapeConfig")
)


def chart_of(release_chart: str) -> str:
    """The chart name of a Release's `chart` input (`oci://registry/path/<name>` or a repository chart's name)."""
    return release_chart.rstrip("/").rsplit("/", 1)[-1]


def installed_by_cluster(plan: Plan) -> dict[str, set[GroupKind]]:
    installed: dict[str, set[GroupKind]] = defaultdict(set)
    for release in plan.helm_releases():
        chart = chart_of(release.inputs["chart"])
        if chart not in CHART_CRDS:
            continue
        target = plan.cluster_of(release) if CHART_CRDS[chart].target == "cluster" else karmada_name(plan.environment)
        installed[target or ""] |= installed_kinds(chart, release.inputs.get("values") or {})
    for resource in plan.of_type(CONFIG_FILE):
        if resource.inputs.get("file") in FILE_CRDS:
            installed[plan.cluster_of(resource) or ""].add(FILE_CRDS[resource.inputs["file"]])
    for resource in plan.of_type(GKE_CLUSTER):
        if resource.inputs.get("enableMultiNetworking"):
            installed[resource.inputs["name"]] |= GKE_MULTI_NETWORK_KINDS
    for region in plan.spec.regions if plan.spec is not None else ():
        name = cluster_name(plan.environment, region)
        if region.observability.enabled and region.observability.existing_prometheus is not None:
            installed[name] |= PROMETHEUS_OPERATOR_KINDS
        # README, "Building on a cluster that already exists": an existing GKE cluster with GPUDirect pools has
        # multi-networking on.
        existing_gke = region.cluster.existing is not None and region.cloud == "gcp"
        if existing_gke and any(pool.gpu_direct for pool in region.gpu_pools):
            installed[name] |= GKE_MULTI_NETWORK_KINDS
    return installed


def uninstalled_kinds(plan: Plan) -> list[str]:
    """One line per custom resource whose kind nothing installs on its cluster: the object, the cluster, the fix."""
    installed = installed_by_cluster(plan)
    problems = []
    for obj in plan.kubernetes_objects():
        manifest = obj.inputs
        if not is_custom_resource(manifest):
            continue
        group, kind = api_group(manifest["apiVersion"]), manifest["kind"]
        cluster = plan.cluster_of(obj) or ""
        if (group, kind) in installed.get(cluster, set()):
            continue
        meta = manifest.get("metadata") or {}
        name = "/".join(n for n in (meta.get("namespace"), meta.get("name")) if n)
        charts = sorted(
            c for c, crds in CHART_CRDS.items() if any(e.group == group and kind in e.kinds for e in crds.installed)
        )
        fix = f"install {' or '.join(charts)} on {cluster}" if charts else "install the CRD that serves it"
        problems.append(
            f"{cluster}: {kind} {name} ({manifest['apiVersion']}): no release or manifest of cluster {cluster} installs "
            f"{kind}.{group}; {fix}, or drop the object"
        )
    return problems
