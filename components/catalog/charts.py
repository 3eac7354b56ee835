"""Pinned Helm charts, each with the upstream files its pin and values are checked against.

`upstream_values` / `upstream_chart` are paths under conformance/upstream (DESIGN.md §6); the
conformance suite asserts the pinned version equals the upstream Chart.yaml version and that
every value we set exists in the chart's defaults, except below the `free_form` globs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from platform_catalog.pod_priorities import CHART_PODS, ChartPods


@dataclass(frozen=True)
class ChartRef:
    name: str
    repository: str  # https:// Helm repository or oci:// registry path (without the chart name)
    version: str
    upstream_chart: str
    upstream_values: str
    free_form: tuple[str, ...] = ()
    # Subchart key -> its upstream values file (values nested under that key are checked against it).
    subcharts: dict[str, str] = field(default_factory=dict)
    # Further upstream values files documenting keys the chart passes through verbatim (checked like defaults).
    documented_values: tuple[str, ...] = ()
    # When the repository does not serve the tag the upstream files were copied at: that tag, whose chart
    # differs from the pinned one only as the comment at the pin shows (the files still check our values).
    files_tag: str | None = None

    @property
    def is_oci(self) -> bool:
        return self.repository.startswith("oci://")

    @property
    def pods(self) -> ChartPods:
        """The priority classes of its pods and of those its controller creates (GKE admits the system-*-critical
        ones outside kube-system only with a matching ResourceQuota): platform_catalog/pod_priorities.py, which
        the policy pack reads too; value-keyed defaults are checked against `upstream_values`."""
        return CHART_PODS[self.name]


# Filled by the add-on components' capabilities; keyed by chart name.
CHARTS: dict[str, ChartRef] = {}

# Volcano: gang scheduling, tenant queues, HyperNode topology [volcano-sh/volcano@v1.15.1:installer/helm/chart/volcano].
# The repository serves chart 1.15.0 as its newest (helm-index snapshot be34e957; no volcano-1.15.1 release in
# volcano-sh/helm-charts, FACTS-3.md §3). `git diff v1.15.0 v1.15.1 -- installer/helm/chart/volcano` touches
# only Chart.yaml (version, appVersion) and values.yaml `basic.image_tag_version`: so chart 1.15.0 with the
# v1.15.1 images is exactly the v1.15.1 chart, and the v1.15.1 files check our values.
CHARTS["volcano"] = ChartRef(
    name="volcano",
    repository="https://volcano-sh.github.io/helm-charts",
    version="1.15.0",
    upstream_chart="volcano/v1.15.1/chart-volcano.Chart.yaml",
    upstream_values="volcano/v1.15.1/chart-volcano.values.yaml",
    files_tag="v1.15.1",
)
VOLCANO_IMAGE_TAG = "v1.15.1"  # basic.image_tag_version: the v1.15.1 binaries (55 fixes over v1.15.0)

# NVIDIA GPU Operator (FACTS.md). The in-tree Chart.yaml says v1.0.0-devel: NVIDIA's release
# pipeline stamps the git tag as the chart version, so the pin is the tag the upstream files
# were copied at. node-feature-discovery 0.19.0 is a subchart (condition nfd.enabled).
CHARTS["gpu-operator"] = ChartRef(
    name="gpu-operator",
    repository="https://helm.ngc.nvidia.com/nvidia",
    version="v26.7.0",
    upstream_chart="gpu-operator/v26.7.0/chart-gpu-operator.Chart.yaml",
    upstream_values="gpu-operator/v26.7.0/chart-gpu-operator.values.yaml",
    subcharts={
        "node-feature-discovery": "gpu-operator/v26.7.0/chart-gpu-operator.subchart-node-feature-discovery.values.yaml"
    },
)

# Advertises vpc.amazonaws.com/efa on EFA nodes [aws/eks-charts@v0.0.242:stable/aws-efa-k8s-device-plugin].
CHARTS["aws-efa-k8s-device-plugin"] = ChartRef(
    name="aws-efa-k8s-device-plugin",
    repository="https://aws.github.io/eks-charts",
    version="v0.5.30",
    upstream_chart="aws-efa-k8s-device-plugin/v0.0.242/chart-aws-efa-k8s-device-plugin.Chart.yaml",
    upstream_values="aws-efa-k8s-device-plugin/v0.0.242/chart-aws-efa-k8s-device-plugin.values.yaml",
    free_form=("nodeSelector",),
)

# Fluid: Dataset / AlluxioRuntime / DataLoad CRDs, the Alluxio runtime controller and the FUSE CSI
# driver [fluid-cloudnative/fluid@v1.0.8:charts/fluid/fluid, FACTS-2.md].
CHARTS["fluid"] = ChartRef(
    name="fluid",
    repository="https://fluid-cloudnative.github.io/charts",
    version="1.0.8",
    upstream_chart="fluid/v1.0.8/chart-fluid.Chart.yaml",
    upstream_values="fluid/v1.0.8/chart-fluid.values.yaml",
)

# DCGM exporter for GKE-managed GPU pools, where no GPU Operator (hence no operator-run exporter) runs
# [NVIDIA/dcgm-exporter@4.5.3-4.8.2:deployment]; chart 4.8.2 is the tag's suffix (SOURCES.md). Its repository
# is the one the project's README installs from (README.md L38-39); no index snapshot was copied.
CHARTS["dcgm-exporter"] = ChartRef(
    name="dcgm-exporter",
    repository="https://nvidia.github.io/dcgm-exporter/helm-charts",
    version="4.8.2",
    upstream_chart="dcgm-exporter/4.5.3-4.8.2/chart-dcgm-exporter.Chart.yaml",
    upstream_values="dcgm-exporter/4.5.3-4.8.2/chart-dcgm-exporter.values.yaml",
    # Passed through: affinity (toYaml), the container securityContext (toYaml).
    free_form=("affinity", "securityContext"),
)

# Prometheus Operator (its CRDs), Prometheus, Alertmanager, Grafana, kube-state-metrics, node exporter.
CHARTS["kube-prometheus-stack"] = ChartRef(
    name="kube-prometheus-stack",
    repository="oci://ghcr.io/prometheus-community/charts",  # FACTS-2.md
    version="88.5.3",
    upstream_chart="kube-prometheus-stack/kube-prometheus-stack-88.5.3/chart-kube-prometheus-stack.Chart.yaml",
    upstream_values="kube-prometheus-stack/kube-prometheus-stack-88.5.3/chart-kube-prometheus-stack.values.yaml",
    # Maps passed through to the Prometheus custom resource (externalLabels, ResourceRequirements).
    free_form=(
        "prometheus.prometheusSpec.externalLabels",
        "prometheus.prometheusSpec.resources",
        "crds.upgradeJob.resources",  # the CRD upgrade Job's ResourceRequirements
    ),
)

# The chart's CRD upgrade Job (a pre-install/pre-upgrade hook: upstream.HELM_NEVER_UPGRADES_A_CHARTS_CRDS_FOLDER)
# defaults to busybox `latest` and to a kubectl of the cluster's version: pinned. kubectl v1.33 is the clusters'
# minor (1.33, or 1.34 within kubectl's one-minor skew); registry.k8s.io/kubectl needs no shell (the Job runs it as
# its command).
KUBE_PROMETHEUS_CRD_UPGRADE_IMAGES = {
    "busybox": {"registry": "docker.io", "repository": "busybox", "tag": "1.37.0"},
    "kubectl": {"registry": "registry.k8s.io", "repository": "kubectl", "tag": "v1.33.13"},
}

# --- Inference gateway: Envoy Gateway + Envoy AI Gateway ----------------------------------------------
# Version pair: Envoy Gateway v1.9.0 with AI Gateway v1.1.0. The AI Gateway v1.1.0 is released against EG v1.8.1
# (its go.mod, its release notes, the 1.1 docs' egVersion at the tag); v1.9.0's extension-server protocol differs
# from v1.8.1's by one added field only (AI_GATEWAY_ENVOY_GATEWAY_PAIR in upstream.py), and v1.9.0 is the EG whose
# chart and CRDs (with Gateway API v1.6.1) are vendored in conformance/upstream: every Gateway API and Envoy Gateway
# object we render is validated against exactly what this release installs.
ENVOY_GATEWAY_VERSION = "v1.9.0"
AI_GATEWAY_VERSION = "v1.1.0"
# How long Envoy waits for an InferencePool's endpoint picker to answer one ext_proc message, fixed by the
# AI Gateway [envoyproxy/ai-gateway@v1.1.0:internal/extensionserver/inferencepool.go
# buildHTTPFilterForInferencePool, MessageTimeout]: the longest a picker may hold a request in its queue.
AI_GATEWAY_EXT_PROC_TIMEOUT_SECONDS = 300
CHARTS["gateway-helm"] = ChartRef(
    name="gateway-helm",
    repository="oci://docker.io/envoyproxy",  # FACTS.md
    version=ENVOY_GATEWAY_VERSION,
    upstream_chart="envoy-gateway/v1.9.0/chart-gateway-helm.Chart.yaml",
    upstream_values="envoy-gateway/v1.9.0/chart-gateway-helm.values.tmpl.yaml",
    # `config.envoyGateway` is rendered verbatim into the EnvoyGateway config file
    # (charts/gateway-helm/templates/envoy-gateway-config.yaml: toYaml .Values.config.envoyGateway); the keys
    # the AI Gateway needs there are documented by its install values and add-ons, checked against those.
    documented_values=(
        "ai-gateway/v1.1.0/envoy-gateway-values.yaml",
        "ai-gateway/v1.1.0/examples-inference-pool-envoy-gateway-values-addon.yaml",
        "ai-gateway/v1.1.0/examples-token_ratelimit-envoy-gateway-values-addon.yaml",
    ),
    # The EnvoyGateway config's ExtensionAPISettings (envoyproxy/gateway@v1.9.0:api/v1alpha1/envoygateway_types.go
    # L347-375), `{}` in the chart; enableLua (off by default since v1.9.0) is documented by no values file.
    free_form=("config.envoyGateway.extensionApis",),
)
CHARTS["ai-gateway-crds-helm"] = ChartRef(
    name="ai-gateway-crds-helm",
    repository="oci://docker.io/envoyproxy",
    version=AI_GATEWAY_VERSION,
    upstream_chart="ai-gateway/v1.1.0/chart-ai-gateway-crds-helm.Chart.yaml",
    upstream_values="ai-gateway/v1.1.0/chart-ai-gateway-crds-helm.values.yaml",
)
CHARTS["ai-gateway-helm"] = ChartRef(
    name="ai-gateway-helm",
    repository="oci://docker.io/envoyproxy",
    version=AI_GATEWAY_VERSION,
    upstream_chart="ai-gateway/v1.1.0/chart-ai-gateway-helm.Chart.yaml",
    upstream_values="ai-gateway/v1.1.0/chart-ai-gateway-helm.values.yaml",
    # ResourceRequirements passed through to the controller container.
    free_form=("controller.resources",),
)

# The endpoint picker we render for each self-hosted model (components/serving/inference_pool.py): llm-d-router's, the
# picker's home since Gateway API Inference Extension v1.6.0 moved it there (gateway-api-inference-extension@v1.6.0:
# README.md), at the release and image KServe v0.20.0's LLMInferenceService runs (kserve/kserve@v0.20.0:
# config/llmisvcconfig/config-llm-scheduler.yaml; moved with `make upgrade-check`, docs/upstream.md). Its
# InferenceObjective CRD (llm-d.ai/v1alpha2) and the InferencePool CRD (inference.networking.k8s.io/v1, still the
# Inference Extension's: KServe's copy is the v1.5.0 release's) are both installed on each cluster by KServe's
# kserve-llmisvc-resources (upstream.LLM_INFERENCE_SERVICE_INSTALL), the objective CRD identical to llm-d-router
# v0.9.0's; so nothing is applied from a URL.
ENDPOINT_PICKER_VERSION = "v0.9.0"
EPP_IMAGE = f"ghcr.io/llm-d/llm-d-router-endpoint-picker:{ENDPOINT_PICKER_VERSION}"
# Redis for Envoy Gateway's global rate limiter: the image AI Gateway's token rate-limit example runs
# (envoyproxy/ai-gateway:examples/token_ratelimit/redis.yaml).
REDIS_IMAGE = "docker.io/library/redis:8.2.4-alpine3.22"

# KServe (FACTS.md; there is no chart named `kserve` since v0.15): the CRDs, then the controller and
# webhooks [kserve/kserve@v0.20.0:charts/kserve-crd, charts/kserve-resources]. Its webhook
# certificate is a cert-manager Certificate, so cert-manager must already run in the cluster.
CHARTS["kserve-crd"] = ChartRef(
    name="kserve-crd",
    repository="oci://ghcr.io/kserve/charts",
    version="v0.20.0",
    upstream_chart="kserve/v0.20.0/chart-kserve-crd.Chart.yaml",
    upstream_values="kserve/v0.20.0/chart-kserve-crd.values.yaml",
)
CHARTS["kserve-resources"] = ChartRef(
    name="kserve-resources",
    repository="oci://ghcr.io/kserve/charts",
    version="v0.20.0",
    upstream_chart="kserve/v0.20.0/chart-kserve-resources.Chart.yaml",
    upstream_values="kserve/v0.20.0/chart-kserve-resources.values.yaml",
    free_form=("kserve.controller.nodeSelector",),
)
# LLMInferenceService (disaggregated placements) [kserve/kserve@v0.20.0:charts/kserve-llmisvc-crd,
# charts/kserve-llmisvc-resources]: its CRDs, then its own controller (cmd/llmisvc, not kserve-resources'), which
# also ships the Inference Extension CRDs the cluster's InferencePools need (`components/addons/kserve.py`).
CHARTS["kserve-llmisvc-crd"] = ChartRef(
    name="kserve-llmisvc-crd",
    repository="oci://ghcr.io/kserve/charts",
    version="v0.20.0",
    upstream_chart="kserve/v0.20.0/chart-kserve-llmisvc-crd.Chart.yaml",
    upstream_values="kserve/v0.20.0/chart-kserve-llmisvc-crd.values.yaml",
)
CHARTS["kserve-llmisvc-resources"] = ChartRef(
    name="kserve-llmisvc-resources",
    repository="oci://ghcr.io/kserve/charts",
    version="v0.20.0",
    upstream_chart="kserve/v0.20.0/chart-kserve-llmisvc-resources.Chart.yaml",
    upstream_values="kserve/v0.20.0/chart-kserve-llmisvc-resources.values.yaml",
    free_form=("kserve.llmisvc.controller.nodeSelector",),
)
# The well-known LLMInferenceServiceConfigs an LLMInferenceService is merged over (llmisvcConfigs.enabled; off by
# default). Its ClusterServingRuntimes (servingruntime.enabled, off by default) stay off: the platform renders its
# own runtimes [kserve/kserve@v0.20.0:charts/kserve-runtime-configs].
CHARTS["kserve-runtime-configs"] = ChartRef(
    name="kserve-runtime-configs",
    repository="oci://ghcr.io/kserve/charts",
    version="v0.20.0",
    upstream_chart="kserve/v0.20.0/chart-kserve-runtime-configs.Chart.yaml",
    upstream_values="kserve/v0.20.0/chart-kserve-runtime-configs.values.yaml",
)

# cert-manager: issues KServe's webhook serving certificate (a cert-manager Certificate in kserve-resources).
# Published to oci://quay.io/jetstack/charts/cert-manager; the release tool stamps the tag (with its `v`) as
# chart version over the in-tree v0.0.0 [cert-manager@v1.21.1:RELEASE.md, make/_shared_new/helm/helm.mk]
# (FACTS-3.md §1). The chart templates its own CRDs when `crds.enabled`.
CHARTS["cert-manager"] = ChartRef(
    name="cert-manager",
    repository="oci://quay.io/jetstack/charts",
    version="v1.21.1",
    upstream_chart="cert-manager/v1.21.1/chart-cert-manager.Chart.yaml",
    upstream_values="cert-manager/v1.21.1/chart-cert-manager.values.yaml",
    free_form=("nodeSelector", "webhook.nodeSelector", "cainjector.nodeSelector", "startupapicheck.nodeSelector"),
)

# KEDA: autoscales model servers on Prometheus metrics (queue depth, TTFT); installs its CRDs
# (FACTS-2.md) [kedacore/charts@v2.20.2:keda].
CHARTS["keda"] = ChartRef(
    name="keda",
    repository="https://kedacore.github.io/charts",
    version="2.20.2",
    upstream_chart="keda/v2.20.2/chart-keda.Chart.yaml",
    upstream_values="keda/v2.20.2/chart-keda.values.yaml",
    free_form=("nodeSelector",),
)

# Cluster Autoscaler: sets the desired size of the EKS GPU pools' Auto Scaling groups for pending pods
# and takes idle nodes away (FACTS-3.md §2) [kubernetes/autoscaler@cluster-autoscaler-chart-9.59.0:
# charts/cluster-autoscaler]. Maps passed through: extraArgs become `--<key>=<value>` flags; the others
# are rendered verbatim into the Deployment and ServiceAccount.
CHARTS["cluster-autoscaler"] = ChartRef(
    name="cluster-autoscaler",
    repository="https://kubernetes.github.io/autoscaler",
    version="9.59.0",
    upstream_chart="cluster-autoscaler/cluster-autoscaler-chart-9.59.0/chart-cluster-autoscaler.Chart.yaml",
    upstream_values="cluster-autoscaler/cluster-autoscaler-chart-9.59.0/chart-cluster-autoscaler.values.yaml",
    free_form=(
        "extraArgs",
        "nodeSelector",
        "resources",
        "securityContext",
        "containerSecurityContext",
        "rbac.serviceAccount.annotations",
    ),
)
CLUSTER_AUTOSCALER_IMAGE_TAG = "v1.35.0"  # the chart's appVersion and image.tag at this pin

# Karmada: control plane (installMode host) on the federation host, karmada-agent (installMode agent) on
# pull-mode members [karmada-io/karmada@v1.18.2:charts/karmada, FACTS.md]. The in-tree Chart.yaml says 0.0.0;
# hack/package-helm-chart.sh stamps the tag as chart version and as karmadaImageVersion. The federation
# also installs `kserve-crd` (above) into the Karmada API server, to hold federated InferenceServices.
# Repository: every published release pushes the chart to oci://docker.io/karmada (dockerhub-released-chart.yml,
# `make push-chart`); the raw master/charts index gets patch releases only by a manual PR and stops at v1.18.1
# (FACTS-3.md §3).
CHARTS["karmada"] = ChartRef(
    name="karmada",
    repository="oci://docker.io/karmada",
    version="v1.18.2",
    upstream_chart="karmada/v1.18.2/chart-karmada.Chart.yaml",
    upstream_values="karmada/v1.18.2/chart-karmada.values.yaml",
    # Rendered as `--feature-gates=<k>=<v>,...` and `--<k>=<v>` flags of karmada-controller-manager; the agent's pod
    # annotations as they are (templates/karmada-agent.yaml L78-81: `toYaml` of agent.podAnnotations).
    free_form=(
        "controllerManager.featureGates",
        "controllerManager.extraCommandArgs",
        "agent.podAnnotations",
        "etcd.affinity",  # a pod Affinity, rendered with toYaml (templates/etcd.yaml L34-L37)
    ),
)
KARMADA_VERSION = "v1.18.2"  # karmadaImageVersion and the Karmada component image tags at this pin
# The chart's hook and init containers default to `latest` tags; pinned here. They run `/bin/sh -c 'bash <<EOF'`
# with kubectl and sleep (KARMADA_HOST_HOOKS_NEED_BASH, components/catalog/bringup.py): registry.k8s.io/kubectl is
# distroless, no shell (KUBECTL_IMAGE_HAS_NO_SHELL); alpine/k8s carries busybox, bash and kubectl
# (ALPINE_K8S_IMAGE_HAS_BASH), by digest. kubectl 1.34 is within one minor of the chart's karmada-apiserver
# (v1.35.2) and of the clusters (1.33). cfssl runs the etcd wait loop (bash + curl: its image is FROM golang).
KARMADA_KUBECTL_IMAGE = {
    "registry": "docker.io",
    "repository": "alpine/k8s",
    "tag": "1.34.1@sha256:ec714df3813b5405292860f8a1c55c5727bf8c33c88992f1e981efad8065547f",
}
KARMADA_CFSSL_IMAGE = {"registry": "docker.io", "repository": "cfssl/cfssl", "tag": "v1.6.5"}
# ExternalDNS publishes the gateways' hostnames (components/addons/gateway_dns.py), rendered by the program (no chart).
# The digest is the one kubernetes/k8s.io promotes for the tag (registry.k8s.io/images/k8s-staging-external-dns/
# images.yaml at c00fde60: "sha256:4f3ba4c2...b4fc2b": ["v0.15.1"]); v0.15.1 serves gateway-httproute on the
# v1beta1 Gateway API, which gateway-api v1.6.1's CRDs still serve.
EXTERNAL_DNS_IMAGE = (
    "registry.k8s.io/external-dns/external-dns:v0.15.1"
    "@sha256:4f3ba4c2bd28030caad05bb7b47fbf47549a46d5e8443b74f0be463550b4fc2b"
)

# Clusterpedia v0.9.0: multi-cluster search on the federation host. Its objects are rendered by the platform
# (components/federation/search_index.py) from the clusterpedia-2.6.0 chart's templates, not installed with the chart:
# the chart grants its components cluster-admin and registers its API without TLS verification, and no value turns
# either off (CLUSTERPEDIA_CHART_GRANTS_CLUSTER_ADMIN). The chart's images are v0.9.0 [clusterpedia-io/clusterpedia-helm
# @clusterpedia-2.6.0:charts/clusterpedia/values.yaml L127-129, L220-222 (vendored)]: the source read is
# clusterpedia-io/clusterpedia@v0.9.0. CRDs are not the chart's: its `_crds/` (unchanged since 2022, ec2604f) lack
# PediaCluster `spec.authenticationFrom`, which v0.9.0 reads (staging/src/github.com/clusterpedia-io/api/cluster/
# v1alpha2/types.go L89, pkg/utils/rest.go L14-30) and the API server would prune; the v0.9.0 CRDs are the ones in
# its kustomize/crds (CLUSTERPEDIA_CRDS). The controller manager runs only the ClusterImportPolicy and
# PediaClusterLifecycle controllers (cmd/controller-manager/app/controllermanager.go L165-190), which the platform
# does not use: it is not rendered.
CLUSTERPEDIA_VERSION = "v0.9.0"
CLUSTERPEDIA_IMAGES = {
    component: f"ghcr.io/clusterpedia-io/clusterpedia/{component}:{CLUSTERPEDIA_VERSION}"
    for component in ("apiserver", "clustersynchro-manager")
}
# The port Clusterpedia's API server listens on (its `--secure-port`; the chart's 443 needs root, which the platform
# does not run it as); its Service maps 443, where the APIService calls, to it.
CLUSTERPEDIA_APISERVER_PORT = 8443
# The v0.9.0 CRD files, applied as they are at the tag: URL -> the kind each defines (vendored; chart_crds.FILE_CRDS).
# By URL, so the deploy runner reaches raw.githubusercontent.com: the vendored copies cannot stand in for them, they
# lack the `status` schema Clusterpedia writes (CLUSTERPEDIA_CRDS_NEED_THEIR_STATUS).
CLUSTERPEDIA_CRDS: dict[str, tuple[str, str]] = {
    f"https://raw.githubusercontent.com/clusterpedia-io/clusterpedia/{CLUSTERPEDIA_VERSION}/kustomize/crds/"
    f"cluster.clusterpedia.io_{name}.yaml": ("cluster.clusterpedia.io", kind)
    for name, kind in (("pediaclusters", "PediaCluster"), ("clustersyncresources", "ClusterSyncResources"))
}
# Clusterpedia's index store. The chart's default `postgresql.image` (docker.io/bitnami/postgresql:11.15.0-debian-10-r14,
# values.yaml L385-387) is gone from Docker Hub: Bitnami moved its versioned tags to bitnamilegacy in 2025 and did not
# copy debian-10 ones (bitnami/containers#83267, bitnami/charts#36229). The platform runs the official image.
CLUSTERPEDIA_POSTGRES_IMAGE = {"registry": "docker.io", "repository": "library/postgres", "tag": "17.6-bookworm"}
