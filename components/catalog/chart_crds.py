"""Which custom-resource kinds each pinned chart makes servable, and where: the fact a plan checks every custom
resource against (a kind no release of its cluster installs is never accepted by that API server), that the rollout's
bring-up check and the rehearsal reuse.

Read from each chart's files at its pinned tag (`tools/upstream_origins.py` derives them: which files hold CRDs,
which template or Chart.yaml makes the release apply them, which values gate them) and vendored as
`conformance/upstream/<project>/<tag>/generated-chart-crds.<chart>.json`; `tests/test_chart_crds.py` compares this
table with those files and each gate's default with the chart's values.yaml. A chart absent here has not been read.

The interface:
- `installed_kinds(chart, values)`: the (group, kind) pairs a release of `chart` with our `values` (over the
  chart's defaults) makes servable;
- `CHART_CRDS[chart].target`: where they are served, the release's own cluster, or for Karmada's chart in host mode
  the Karmada API server it runs (`components/federation/control_plane.py` names that cluster);
- `FILE_CRDS[url]`: the kind a CRD file the platform applies by URL makes servable on its cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from components.catalog.charts import CLUSTERPEDIA_CRDS

GroupKind = tuple[str, str]
Target = Literal["cluster", "karmada-api"]


@dataclass(frozen=True)
class Gate:
    """A chart value that gates a template: truthy (`equals` True) or equal to `equals`; `default` is the chart's."""

    path: str
    default: Any
    equals: str | bool = True

    def holds(self, values: Mapping[str, Any]) -> bool:
        current: Any = values
        for key in self.path.split("."):
            if not isinstance(current, Mapping) or key not in current:
                current = self.default
                break
            current = current[key]
        return bool(current) if self.equals is True else current == self.equals


@dataclass(frozen=True)
class Installed:
    """Kinds a chart installs together; any gate of `when` holding installs them (no gate: always)."""

    group: str
    kinds: tuple[str, ...]
    when: tuple[Gate, ...] = ()


@dataclass(frozen=True)
class ChartCrds:
    source: str  # repo@tag:the chart's directory
    installed: tuple[Installed, ...] = ()
    target: Target = "cluster"


def _group(group: str, *kinds: str, when: tuple[Gate, ...] = ()) -> Installed:
    return Installed(group, kinds, when)


_LLMISVC_GIE = (Gate("kserve.llmisvc.createGIECRDs", default=True),)
_EG_CRDS = (Gate("crds.enabled", default=True),)
_KARMADA_HOST = (Gate("installMode", default="host", equals="host"),)

CHART_CRDS: dict[str, ChartCrds] = {
    # kserve-crd and kserve-llmisvc-crd both carry ClusterStorageContainer; each template looks the CRD up and
    # skips it when another release owns it (templates/serving.kserve.io_clusterstoragecontainers.yaml).
    "kserve-crd": ChartCrds(
        "kserve/kserve@v0.20.0:charts/kserve-crd",
        (
            _group(
                "serving.kserve.io",
                "ClusterServingRuntime",
                "ClusterStorageContainer",
                "InferenceGraph",
                "InferenceService",
                "ServingRuntime",
                "TrainedModel",
            ),
        ),
    ),
    "kserve-llmisvc-crd": ChartCrds(
        "kserve/kserve@v0.20.0:charts/kserve-llmisvc-crd",
        (_group("serving.kserve.io", "ClusterStorageContainer", "LLMInferenceService", "LLMInferenceServiceConfig"),),
    ),
    # files/llmisvc/resources.yaml, rendered by templates/llmisvc/resources.yaml, which drops these four when
    # kserve.llmisvc.createGIECRDs is false (their names: templates/_helpers.tpl llm-isvc-resources.gieCRDNames).
    "kserve-llmisvc-resources": ChartCrds(
        "kserve/kserve@v0.20.0:charts/kserve-llmisvc-resources",
        (
            _group("inference.networking.k8s.io", "InferencePool", when=_LLMISVC_GIE),
            _group("inference.networking.x-k8s.io", "InferencePool", when=_LLMISVC_GIE),
            _group("llm-d.ai", "InferenceModelRewrite", "InferenceObjective", when=_LLMISVC_GIE),
        ),
    ),
    "kserve-resources": ChartCrds("kserve/kserve@v0.20.0:charts/kserve-resources"),
    "kserve-runtime-configs": ChartCrds("kserve/kserve@v0.20.0:charts/kserve-runtime-configs"),
    # The `crds` subchart's crds/ (Chart.yaml: condition crds.enabled): Gateway API v1.6.1 and Envoy Gateway's own.
    "gateway-helm": ChartCrds(
        "envoyproxy/gateway@v1.9.0:charts/gateway-helm",
        (
            _group(
                "gateway.envoyproxy.io",
                "Backend",
                "BackendTrafficPolicy",
                "ClientTrafficPolicy",
                "EnvoyExtensionPolicy",
                "EnvoyPatchPolicy",
                "EnvoyProxy",
                "HTTPRouteFilter",
                "SecurityPolicy",
                when=_EG_CRDS,
            ),
            _group(
                "gateway.networking.k8s.io",
                "BackendTLSPolicy",
                "GRPCRoute",
                "Gateway",
                "GatewayClass",
                "HTTPRoute",
                "ListenerSet",
                "ReferenceGrant",
                "TCPRoute",
                "TLSRoute",
                "UDPRoute",
                when=_EG_CRDS,
            ),
            _group("gateway.networking.x-k8s.io", "XBackend", "XBackendTrafficPolicy", "XMesh", when=_EG_CRDS),
        ),
    ),
    "ai-gateway-crds-helm": ChartCrds(
        "envoyproxy/ai-gateway@v1.1.0:manifests/charts/ai-gateway-crds-helm",
        (
            _group(
                "aigateway.envoyproxy.io",
                "AIGatewayRoute",
                "AIServiceBackend",
                "BackendSecurityPolicy",
                "GatewayConfig",
                "MCPRoute",
                "QuotaPolicy",
            ),
        ),
    ),
    "ai-gateway-helm": ChartCrds("envoyproxy/ai-gateway@v1.1.0:manifests/charts/ai-gateway-helm"),
    # templates/<group>_<version>_<kind>.yaml render crd/bases/* (and the jobflow subchart's likewise).
    "volcano": ChartCrds(
        "volcano-sh/volcano@v1.15.1:installer/helm/chart/volcano",
        (
            _group("batch.volcano.sh", "CronJob", "Job"),
            _group("bus.volcano.sh", "Command"),
            _group("config.volcano.sh", "ColocationConfiguration"),
            _group("flow.volcano.sh", "JobFlow", "JobTemplate"),
            _group("nodeinfo.volcano.sh", "Numatopology"),
            _group("scheduling.volcano.sh", "PodGroup", "Queue"),
            _group("shard.volcano.sh", "NodeShard"),
            _group("topology.volcano.sh", "HyperNode"),
        ),
    ),
    "fluid": ChartCrds(
        "fluid-cloudnative/fluid@v1.0.8:charts/fluid/fluid",
        (
            _group(
                "data.fluid.io",
                "AlluxioRuntime",
                "DataBackup",
                "DataLoad",
                "DataMigrate",
                "DataProcess",
                "Dataset",
                "EFCRuntime",
                "GooseFSRuntime",
                "JindoRuntime",
                "JuiceFSRuntime",
                "ThinRuntime",
                "ThinRuntimeProfile",
                "VineyardRuntime",
            ),
        ),
    ),
    "cert-manager": ChartCrds(
        "cert-manager/cert-manager@v1.21.1:deploy/charts/cert-manager",
        tuple(
            _group(group, *kinds, when=(Gate("crds.enabled", default=False), Gate("installCRDs", default=False)))
            for group, kinds in (
                ("acme.cert-manager.io", ("Challenge", "Order")),
                ("cert-manager.io", ("Certificate", "CertificateRequest", "ClusterIssuer", "Issuer")),
            )
        ),
    ),
    "keda": ChartCrds(
        "kedacore/charts@v2.20.2:keda",
        tuple(
            _group(group, *kinds, when=(Gate("crds.install", default=True),))
            for group, kinds in (
                ("eventing.keda.sh", ("CloudEventSource", "ClusterCloudEventSource")),
                ("keda.sh", ("ClusterTriggerAuthentication", "ScaledJob", "ScaledObject", "TriggerAuthentication")),
            )
        ),
    ),
    "kube-prometheus-stack": ChartCrds(
        "prometheus-community/helm-charts@kube-prometheus-stack-88.5.3:charts/kube-prometheus-stack",
        (
            _group(
                "monitoring.coreos.com",
                "Alertmanager",
                "AlertmanagerConfig",
                "PodMonitor",
                "Probe",
                "Prometheus",
                "PrometheusAgent",
                "PrometheusRule",
                "ScrapeConfig",
                "ServiceMonitor",
                "ThanosRuler",
                when=(Gate("crds.enabled", default=True),),
            ),
        ),
    ),
    # Host mode: templates/pre-install-job.yaml applies _crds/bases/** to the Karmada API server, and the
    # aggregated API server serves cluster.karmada.io (templates/_karmada_apiservice.tpl, APIService
    # v1alpha1.cluster.karmada.io; the kind: pkg/apis/cluster/v1alpha1/types.go).
    "karmada": ChartCrds(
        "karmada-io/karmada@v1.18.2:charts/karmada",
        (
            _group("apps.karmada.io", "WorkloadRebalancer", when=_KARMADA_HOST),
            _group("autoscaling.karmada.io", "CronFederatedHPA", "FederatedHPA", when=_KARMADA_HOST),
            _group(
                "config.karmada.io",
                "ResourceInterpreterCustomization",
                "ResourceInterpreterWebhookConfiguration",
                when=_KARMADA_HOST,
            ),
            _group("multicluster.x-k8s.io", "ServiceExport", "ServiceImport", when=_KARMADA_HOST),
            _group("networking.karmada.io", "MultiClusterIngress", "MultiClusterService", when=_KARMADA_HOST),
            _group(
                "policy.karmada.io",
                "ClusterOverridePolicy",
                "ClusterPropagationPolicy",
                "ClusterTaintPolicy",
                "FederatedResourceQuota",
                "OverridePolicy",
                "PropagationPolicy",
                when=_KARMADA_HOST,
            ),
            _group("remedy.karmada.io", "Remedy", when=_KARMADA_HOST),
            _group("work.karmada.io", "ClusterResourceBinding", "ResourceBinding", "Work", when=_KARMADA_HOST),
            _group("cluster.karmada.io", "Cluster", when=_KARMADA_HOST),
        ),
        target="karmada-api",
    ),
}


# CRD files the platform applies itself (a `kubernetes:yaml/v2:ConfigFile` of the file at its tag, on the cluster of its
# provider) where a chart's own CRDs are too old: URL -> the kind the file defines. tests/test_chart_crds.py reads each
# in its vendored copy.
FILE_CRDS: dict[str, GroupKind] = dict(CLUSTERPEDIA_CRDS)


def installed_kinds(chart: str, values: Mapping[str, Any]) -> frozenset[GroupKind]:
    """The (group, kind) pairs a release of `chart` with `values` (over the chart's defaults) makes servable.

    Raises KeyError for a chart this table has not read: a plan must not guess what it installs.
    """
    return frozenset(
        (entry.group, kind)
        for entry in CHART_CRDS[chart].installed
        if not entry.when or any(gate.holds(values) for gate in entry.when)
        for kind in entry.kinds
    )


@dataclass(frozen=True)
class CrdUpgrader:
    """What applies a chart's crds/ CRDs again at an upgrade, which Helm never does
    (upstream.HELM_NEVER_UPGRADES_A_CHARTS_CRDS_FOLDER): the chart's own hook, turned on by `gate`; where the chart
    has none at the pin, `manual`, the step a chart bump takes by hand before the rollout (docs/recipes.md)."""

    source: str
    gate: Gate | None = None
    manual: str = ""


# Every chart whose CRDs Helm installs from crds/ (the generated-chart-crds files of CHART_CRDS: rendered_by
# Chart.yaml; and gpu-operator, whose kinds no object of ours needs, so CHART_CRDS has not read it);
# tests/test_chart_crds.py holds each release of the plans to its upgrader.
CRD_UPGRADERS: dict[str, CrdUpgrader] = {
    "gpu-operator": CrdUpgrader(
        "NVIDIA/gpu-operator@v26.7.0:deployments/gpu-operator/crds/ (and node-feature-discovery's), "
        "templates/upgrade_crd.yaml (a pre-upgrade Job: manage-crds apply), values.yaml L89",
        gate=Gate("operator.upgradeCRD", default=True),
    ),
    "fluid": CrdUpgrader(
        "fluid-cloudnative/fluid@v1.0.8:charts/fluid/fluid/templates/upgrade/crd-upgrade.yaml L1-L33 (a pre-upgrade "
        "Job running the fluid-crd-upgrader image's upgrade-crds.sh), values.yaml L7-L14",
        gate=Gate("crdUpgrade.enabled", default=True),
    ),
    "kube-prometheus-stack": CrdUpgrader(
        "prometheus-community/helm-charts@kube-prometheus-stack-88.5.3:charts/kube-prometheus-stack/charts/crds/"
        "templates/upgrade/job.yaml (pre-install,pre-upgrade,pre-rollback: kubectl apply --server-side of the "
        "chart's files/crds.bz2), crds.yaml; values.yaml L9-L10",
        gate=Gate("crds.upgradeJob.enabled", default=False),
    ),
    "gateway-helm": CrdUpgrader(
        "envoyproxy/gateway@v1.9.0:charts/gateway-helm/charts/crds (crds/ only, no hook; the separate "
        "charts/gateway-crds-helm renders the same CRDs as templates)",
        manual="helm template gateway-crds oci://docker.io/envoyproxy/gateway-crds-helm --version <new version> "
        "--set crds.gatewayAPI.enabled=true --set crds.gatewayAPI.channel=experimental "
        "--set crds.envoyGateway.enabled=true | kubectl apply --server-side --force-conflicts -f -",
    ),
}
