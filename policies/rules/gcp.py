"""GKE baselines (CIS GKE benchmark / Checkov GCP checks) and node auto-repair on both clouds."""

from __future__ import annotations

from collections.abc import Iterator

from platform_catalog.address_space import covers_internet
from platform_catalog.pod_priorities import CHART_PODS, GKE_CRITICAL_PRIORITY_CLASSES
from policies.framework import CannotCheck, Context, Violation, rule
from policies.model import Resource, Stack, as_list, get, peek
from policies.pods import WORKLOAD_KINDS, is_workload, workloads
from policies.rules.aws import NODE_GROUP

GKE_CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
K8S_PROVIDER = "pulumi:providers:kubernetes"


def _node_configs(r: Resource) -> list[tuple[str, dict]]:
    """(where, nodeConfig) of a node pool, or of a cluster's default pool when it declares one."""
    config = get(r.props, "nodeConfig")
    if not isinstance(config, dict):
        return []
    return [(f"node pool {r.name}" if r.type == NODE_POOL else f"cluster {r.name} default pool", config)]


def _default_service_account(account: object) -> bool:
    return account == "default" or (
        isinstance(account, str) and account.endswith("-compute@developer.gserviceaccount.com")
    )


@rule(
    name="gke-private-nodes",
    description="GKE nodes have no external IPs (private nodes), and no node pool opts out.",
    severity="high",
    remediation="set privateClusterConfig.enablePrivateNodes=true on the cluster and do not set "
    "networkConfig.enablePrivateNodes=false on pools; egress goes through Cloud NAT",
    applies_to=(GKE_CLUSTER, NODE_POOL),
)
def gke_private_nodes(r: Resource, ctx: Context) -> Iterator[Violation]:
    if r.type == NODE_POOL:
        if get(r.props, "networkConfig", "enablePrivateNodes") is False:
            yield Violation(f"node pool {r.name} gives its nodes public IPs (networkConfig.enablePrivateNodes=false)")
        return
    if get(r.props, "privateClusterConfig", "enablePrivateNodes") is not True:
        yield Violation(f"cluster {r.name}: privateClusterConfig.enablePrivateNodes is not true")


@rule(
    name="gke-control-plane-not-public",
    description="The GKE control plane is private, or reachable only from authorized networks that are not 0.0.0.0/0.",
    severity="high",
    remediation="set privateClusterConfig.enablePrivateEndpoint=true, or masterAuthorizedNetworksConfig.cidrBlocks "
    "to your office/VPN CIDRs (regions[].apiAccess.publicCidrs) with gcpPublicCidrsAccessEnabled=false",
    applies_to=(GKE_CLUSTER,),
)
def gke_control_plane_not_public(r: Resource, ctx: Context) -> Iterator[Violation]:
    if get(r.props, "privateClusterConfig", "enablePrivateEndpoint") is True:
        return
    networks = get(r.props, "masterAuthorizedNetworksConfig")
    if not isinstance(networks, dict):
        yield Violation(f"cluster {r.name}: public endpoint without masterAuthorizedNetworksConfig is open to all")
        return
    blocks = [get(block, "cidrBlock") for block in as_list(get(networks, "cidrBlocks"))]
    if covers_internet(blocks):
        yield Violation(f"cluster {r.name}: authorized networks {blocks} cover the internet")
    if get(networks, "gcpPublicCidrsAccessEnabled") is True:
        yield Violation(f"cluster {r.name}: gcpPublicCidrsAccessEnabled lets every Google Cloud IP reach the API")


@rule(
    name="gke-workload-identity",
    description="GKE clusters enable Workload Identity and every node pool uses the GKE metadata server.",
    severity="high",
    remediation='set workloadIdentityConfig.workloadPool "<project>.svc.id.goog" on the cluster and '
    'nodeConfig.workloadMetadataConfig.mode "GKE_METADATA" on every pool',
    applies_to=(GKE_CLUSTER, NODE_POOL),
)
def gke_workload_identity(r: Resource, ctx: Context) -> Iterator[Violation]:
    if r.type == GKE_CLUSTER and not get(r.props, "workloadIdentityConfig", "workloadPool"):
        yield Violation(f"cluster {r.name} has no workloadIdentityConfig.workloadPool")
    for where, config in _node_configs(r):
        mode = get(config, "workloadMetadataConfig", "mode")
        if mode != "GKE_METADATA":
            yield Violation(f"{where}: workloadMetadataConfig.mode is {mode or 'unset'}; pods see the node's identity")


def _operator_driver(config: dict) -> bool:
    """GKE does not install the GPU driver: the GPU Operator does (unsigned modules)."""
    return any(
        get(a, "gpuDriverInstallationConfig", "gpuDriverVersion") == "INSTALLATION_DISABLED"
        for a in as_list(get(config, "guestAccelerators"))
    )


@rule(
    name="gke-shielded-nodes",
    description="GKE nodes are shielded: secure boot and integrity monitoring on, shielded nodes not disabled. "
    "Secure boot may be off only on GPU pools whose driver the GPU Operator builds (GKE driver installation "
    "disabled): those kernel modules are unsigned and Secure Boot would refuse them.",
    severity="medium",
    remediation="keep enableShieldedNodes=true on the cluster and set nodeConfig.shieldedInstanceConfig "
    "{enableSecureBoot: true, enableIntegrityMonitoring: true} on every pool",
    applies_to=(GKE_CLUSTER, NODE_POOL),
)
def gke_shielded_nodes(r: Resource, ctx: Context) -> Iterator[Violation]:
    if r.type == GKE_CLUSTER and get(r.props, "enableShieldedNodes") is False:
        yield Violation(f"cluster {r.name} disables shielded nodes")
    for where, config in _node_configs(r):
        if get(config, "shieldedInstanceConfig", "enableSecureBoot") is not True and not _operator_driver(config):
            yield Violation(f"{where}: secure boot is off")
        if get(config, "shieldedInstanceConfig", "enableIntegrityMonitoring") is False:
            yield Violation(f"{where}: integrity monitoring is off")


@rule(
    name="gke-node-service-account",
    description="GKE nodes run as a dedicated least-privilege service account, not the Compute Engine default.",
    severity="high",
    remediation="create a node service account with logging/monitoring/artifact-registry roles only and set "
    "nodeConfig.serviceAccount to it",
    applies_to=(GKE_CLUSTER, NODE_POOL),
)
def gke_node_service_account(r: Resource, ctx: Context) -> Iterator[Violation]:
    configs = _node_configs(r)
    if r.type == NODE_POOL and not configs:
        yield Violation(f"node pool {r.name} has no nodeConfig: it runs as the Compute Engine default account")
    for where, config in configs:
        account = get(config, "serviceAccount")
        if not account or _default_service_account(account):
            yield Violation(f"{where} runs as {account or 'the Compute Engine default service account'}")


@rule(
    name="node-auto-repair",
    description="Node pools repair unhealthy nodes automatically (GKE management.autoRepair, EKS node repair); "
    "flex-start pools the spec names (noAutoRepairPools) must not.",
    severity="medium",
    remediation="GKE: management.autoRepair=true; EKS: nodeRepairConfig.enabled=true",
    applies_to=(NODE_POOL, NODE_GROUP),
    config=("noAutoRepairPools",),
)
def node_auto_repair(r: Resource, ctx: Context) -> Iterator[Violation]:
    if r.type == NODE_POOL:
        exempt = get(r.props, "name") in ctx.value("noAutoRepairPools") and get(r.props, "nodeConfig", "flexStart")
        if get(r.props, "management", "autoRepair") is not True and not exempt:
            yield Violation(f"node pool {r.name}: management.autoRepair is not true")
    elif get(r.props, "nodeRepairConfig", "enabled") is not True:
        yield Violation(f"node group {r.name}: nodeRepairConfig.enabled is not true")


def _on_gke(r: Resource, stack: Stack) -> bool | None:
    """Whether the object's provider was configured from a GKE cluster (its kubeconfig computed from one);
    None when the provider is not among the stack's resources."""
    if not r.provider:
        return False
    provider = stack.by_urn.get(r.provider) or stack.by_urn.get(r.provider.rsplit("::", 1)[0])
    if provider is None:
        return None
    return any(s.type == GKE_CLUSTER for s in stack.sources(provider, "kubeconfig"))


def _critical_classes(r: Resource, stack: Stack) -> tuple[str, set[str]] | None:
    """(namespace, system-*-critical classes its pods use) of a Helm release or a workload; None: not known."""
    if r.type == HELM_RELEASE:
        chart = CHART_PODS.get(str(get(r.props, "chart") or "").rsplit("/", 1)[-1])
        if chart is None:
            return None
        values = peek(r.props, "values")
        classes = chart.priority_classes(values if isinstance(values, dict) else {})
        return str(get(r.props, "namespace")), classes & set(GKE_CRITICAL_PRIORITY_CLASSES)
    classes = {get(w.pod, "priorityClassName") for w in workloads(r, stack)}
    return r.namespace, classes & set(GKE_CRITICAL_PRIORITY_CLASSES)


def _admitting_quota(stack: Stack, cluster: str | None, namespace: str, priority: str) -> bool:
    for quota in stack.kubernetes("ResourceQuota", "", cluster):
        if quota.namespace != namespace or not get(quota.props, "spec", "hard"):
            continue
        for expression in as_list(get(quota.props, "spec", "scopeSelector", "matchExpressions")):
            if (
                get(expression, "scopeName") == "PriorityClass"
                and get(expression, "operator") == "In"
                and priority in as_list(get(expression, "values"))
            ):
                return True
    return False


@rule(
    name="gke-critical-priority-quota",
    description="On GKE, every namespace other than kube-system whose pods use system-node-critical or "
    "system-cluster-critical (set by us or by the chart's defaults) has a ResourceQuota scoped to that priority "
    "class: GKE rejects those pods without one.",
    severity="critical",
    remediation="create a ResourceQuota in the namespace with hard.pods and scopeSelector.matchExpressions "
    "[{scopeName: PriorityClass, operator: In, values: [system-node-critical, system-cluster-critical]}] "
    "(components/k8s/helm.py critical_pods_quota does it for Helm releases)",
    applies_to=(HELM_RELEASE, *WORKLOAD_KINDS),
    subject=lambda r: r.type == HELM_RELEASE or is_workload(r),
    scope="stack",
)
def gke_critical_priority_quota(r: Resource, ctx: Context) -> Iterator[Violation]:
    stack = ctx.require_stack()
    on_gke = _on_gke(r, stack)
    if on_gke is False:
        return
    found = _critical_classes(r, stack)
    if found is None:
        yield CannotCheck(
            f"{r.label}: chart {get(r.props, 'chart')} is not in the catalog; its pods' priority classes are not known"
        )
        return
    namespace, classes = found
    if namespace == "kube-system" or not classes:
        return
    if on_gke is None:
        yield CannotCheck(f"{r.label}: its Kubernetes provider is not in the stack, so its cloud is not known")
        return
    for priority in sorted(classes):
        if not _admitting_quota(stack, r.cluster, namespace, priority):
            yield Violation(
                f"{r.label} runs {priority} pods in namespace {namespace} on GKE cluster {r.cluster}, which has no "
                f"ResourceQuota scoped to PriorityClass {priority}: GKE rejects them"
            )


# `<group>/<Kind>` of the custom resources some chart's controller creates pods for.
_CREATED_POD_KINDS = {pods.kind for chart in CHART_PODS.values() for pods in chart.created_pods}


@rule(
    name="gke-critical-controller-pods-quota",
    description="On GKE, a namespace where a controller creates system-*-critical pods for a custom resource (Fluid's "
    "FUSE DaemonSet for each AlluxioRuntime, with the chart's criticalFusePod on) has a ResourceQuota scoped to that "
    "priority class, though no chart or workload of ours declares those pods: GKE rejects them without one.",
    severity="critical",
    remediation="create the namespace's critical-pods ResourceQuota before the custom resource "
    "(components/k8s/helm.py created_pods_quota), or turn the chart's option off (Fluid: runtime.criticalFusePod)",
    applies_to=tuple(sorted(_CREATED_POD_KINDS)),
    subject=lambda r: r.is_kubernetes and f"{r.api_group}/{r.kind}" in _CREATED_POD_KINDS,
    scope="stack",
)
def gke_critical_controller_pods_quota(r: Resource, ctx: Context) -> Iterator[Violation]:
    stack = ctx.require_stack()
    on_gke = _on_gke(r, stack)
    if on_gke is False:
        return
    kind = f"{r.api_group}/{r.kind}"
    releases = [
        (release, chart)
        for release in stack.of_type(HELM_RELEASE)
        if release.cluster == r.cluster
        and (chart := CHART_PODS.get(str(get(release.props, "chart") or "").rsplit("/", 1)[-1])) is not None
        and any(pods.kind == kind for pods in chart.created_pods)
    ]
    if not releases:
        yield CannotCheck(f"{r.label}: no release of the chart whose controller acts on {kind} is in the stack")
        return
    for release, chart in releases:
        values = peek(release.props, "values")
        classes = chart.created_pod_classes(values if isinstance(values, dict) else {}, kind)
        for priority in sorted(classes & set(GKE_CRITICAL_PRIORITY_CLASSES)):
            if on_gke is None:
                yield CannotCheck(f"{r.label}: its Kubernetes provider is not in the stack, so its cloud is not known")
                return
            if not _admitting_quota(stack, r.cluster, r.namespace, priority):
                yield Violation(
                    f"{release.label}'s controller creates {priority} pods for {r.label} in namespace {r.namespace} "
                    f"on GKE cluster {r.cluster}, which has no ResourceQuota scoped to PriorityClass {priority}: GKE "
                    "rejects them"
                )


@rule(
    name="gke-cluster-hardening",
    description="GKE clusters use no legacy ABAC, no basic auth, no client certificates, and keep system logging "
    "and monitoring on (Checkov's GKE checks).",
    severity="high",
    remediation="drop enableLegacyAbac and masterAuth.username/password, set "
    "masterAuth.clientCertificateConfig.issueClientCertificate=false, keep loggingConfig/monitoringConfig with "
    "SYSTEM_COMPONENTS (never loggingService/monitoringService 'none')",
    applies_to=(GKE_CLUSTER,),
)
def gke_cluster_hardening(r: Resource, ctx: Context) -> Iterator[Violation]:
    if get(r.props, "enableLegacyAbac") is True:
        yield Violation(f"cluster {r.name} enables legacy ABAC, which bypasses RBAC")
    if get(r.props, "masterAuth", "username") or get(r.props, "masterAuth", "password"):
        yield Violation(f"cluster {r.name} enables basic authentication (masterAuth.username/password)")
    if get(r.props, "masterAuth", "clientCertificateConfig", "issueClientCertificate") is True:
        yield Violation(f"cluster {r.name} issues a client certificate with cluster-admin rights")
    for service, config in (("loggingService", "loggingConfig"), ("monitoringService", "monitoringConfig")):
        if str(get(r.props, service) or "").lower() == "none":
            yield Violation(f"cluster {r.name}: {service} is none")
        components = get(r.props, config, "enableComponents")
        if components is not None and "SYSTEM_COMPONENTS" not in [str(c).upper() for c in as_list(components)]:
            yield Violation(f"cluster {r.name}: {config}.enableComponents {components} leaves out SYSTEM_COMPONENTS")


RULES = [
    gke_private_nodes,
    gke_control_plane_not_public,
    gke_workload_identity,
    gke_shielded_nodes,
    gke_node_service_account,
    node_auto_repair,
    gke_critical_priority_quota,
    gke_critical_controller_pods_quota,
    gke_cluster_hardening,
]
