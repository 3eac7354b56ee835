"""What Prometheus scrapes on a cluster: one monitor per component that exposes metrics.

A monitor exists when the environment spec says the component runs in the region, whether
or not the capability that installs it is merged yet; until it is, the monitor matches nothing.

| monitor            | kind           | present when the region...                                |
|--------------------|----------------|-----------------------------------------------------------|
| dcgm-exporter      | ServiceMonitor | has a pool whose GPUs the GPU Operator runs (its DCGM exporter) |
| dcgm-exporter-gke  | ServiceMonitor | has a GKE-managed GPU pool (the standalone DCGM exporter)   |
| volcano-scheduler  | ServiceMonitor | has a GPU pool (Volcano schedules the GPU workloads)        |
| vllm               | PodMonitor     | serves a vLLM model                                        |
| triton             | PodMonitor     | serves a Triton model                                      |
| vllm-disaggregated | PodMonitor     | serves a model disaggregated (KServe's prefill/decode pods) |
| endpoint-picker    | ServiceMonitor | serves a model (each has an InferencePool and its EPP)     |
| envoy-proxy        | PodMonitor     | serves a model (the cluster's AI gateway routes to it)     |
| envoy-ratelimit    | ServiceMonitor | serves a model and the environment has tenants (budgets)   |
| alluxio            | ServiceMonitor | serves a model (the model cache fronts its weights)        |

GKE-managed GPU pools (driverInstall: cloud) run no GPU Operator: NVIDIA's standalone DCGM exporter
runs there instead (components/addons/dcgm_exporter.py), so every GPU pool has GPU dashboard rows and
utilisation alerts.

Every selector below names the upstream file it is read from. Monitors live in the monitoring
namespace and reach into the component's namespace (namespaceSelector), so a Prometheus that
only watches its own namespace still finds them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from components.addons import dcgm_exporter, gpu_operator, volcano
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.k8s import names
from components.serving import llm_inference_service as llmisvc
from components.serving.deployment import model_placements
from platform_catalog.names import DCGM_EXPORTER_NAMESPACE, MODEL_CACHE_NAMESPACE, SERVING_NAMESPACE


@dataclass(frozen=True, kw_only=True)
class ObservedScope:
    """Which metric-exposing components a region runs, read from the environment spec."""

    gpu_pools: tuple[str, ...]
    dcgm_pools: tuple[str, ...]  # pools whose GPUs a DCGM exporter reports (the operator's or the standalone one)
    standalone_dcgm_pools: tuple[str, ...]  # of those, the GKE-managed pools the standalone exporter covers
    vllm_models: tuple[str, ...]
    triton_models: tuple[str, ...]
    disaggregated_models: tuple[str, ...]  # of the vLLM ones, those served by an LLMInferenceService
    has_tenants: bool
    model_cache: bool  # the region runs the Alluxio cache

    @property
    def models(self) -> tuple[str, ...]:
        return self.vllm_models + self.triton_models


def observed_scope(env: EnvironmentSpec, region: RegionSpec) -> ObservedScope:
    served = [m for m in env.models if any(p.region == region.name for p in m.placements)]
    return ObservedScope(
        gpu_pools=tuple(p.name for p in region.gpu_pools),
        dcgm_pools=tuple(
            p.name for p in (*gpu_operator.operator_pools(region), *dcgm_exporter.gke_managed_pools(region))
        ),
        standalone_dcgm_pools=tuple(p.name for p in dcgm_exporter.gke_managed_pools(region)),
        vllm_models=tuple(m.name for m in served if m.runtime == "vllm"),
        triton_models=tuple(m.name for m in served if m.runtime == "triton"),
        disaggregated_models=tuple(p.name for p in model_placements(env, region) if p.disaggregation is not None),
        has_tenants=bool(env.tenants),
        model_cache=region.model_cache.enabled,
    )


def meta_label(prefix: str, kubernetes_label: str) -> str:
    """The discovery meta label Prometheus derives from a Kubernetes label (invalid chars -> `_`)."""
    return prefix + re.sub(r"[^a-zA-Z0-9_]", "_", kubernetes_label)


def _copy(source: str, target: str) -> dict[str, Any]:
    return {"sourceLabels": [source], "targetLabel": target, "action": "replace"}


@dataclass(frozen=True)
class ScrapeTarget:
    name: str
    kind: Literal["ServiceMonitor", "PodMonitor"]
    namespace: str  # where the component runs
    selector: dict[str, Any]
    endpoints: tuple[dict[str, Any], ...]
    attach_node_metadata: bool = False
    source: str = field(default="", compare=False)

    def spec(self) -> dict[str, Any]:
        endpoints_key = "endpoints" if self.kind == "ServiceMonitor" else "podMetricsEndpoints"
        spec: dict[str, Any] = {
            "selector": self.selector,
            "namespaceSelector": {"matchNames": [self.namespace]},
            endpoints_key: [dict(e) for e in self.endpoints],
        }
        if self.attach_node_metadata:
            spec["attachMetadata"] = {"node": True}
        return spec


def scrape_targets(scope: ObservedScope, label_domain: str) -> list[ScrapeTarget]:
    pool = _copy(meta_label("__meta_kubernetes_node_label_", f"{label_domain}/pool"), names.POOL_TARGET_LABEL)
    model = _copy(meta_label("__meta_kubernetes_pod_label_", names.MODEL_LABEL), names.MODEL_TARGET_LABEL)
    targets: list[ScrapeTarget] = []

    if scope.standalone_dcgm_pools:
        targets.append(
            ScrapeTarget(
                "dcgm-exporter-gke",
                "ServiceMonitor",
                DCGM_EXPORTER_NAMESPACE,
                selector={"matchLabels": {"app.kubernetes.io/name": "dcgm-exporter"}},
                endpoints=({"port": "metrics", "path": "/metrics", "interval": "15s", "relabelings": [pool]},),
                attach_node_metadata=True,
                source="NVIDIA/dcgm-exporter@4.5.3-4.8.2:deployment/templates/service.yaml (port metrics, "
                "selector labels in _helpers.tpl)",
            )
        )
    if set(scope.dcgm_pools) - set(scope.standalone_dcgm_pools):
        targets.append(
            ScrapeTarget(
                "dcgm-exporter",
                "ServiceMonitor",
                gpu_operator.NAMESPACE,
                selector={"matchLabels": {"app": "nvidia-dcgm-exporter"}},
                endpoints=({"port": "gpu-metrics", "path": "/metrics", "interval": "15s", "relabelings": [pool]},),
                attach_node_metadata=True,
                source="NVIDIA/gpu-operator@v26.7.0:assets/state-dcgm-exporter/0400_service.yaml",
            )
        )
    if scope.gpu_pools:
        targets.append(
            ScrapeTarget(
                "volcano-scheduler",
                "ServiceMonitor",
                volcano.NAMESPACE,
                selector={"matchLabels": {"app": "volcano-scheduler"}},
                endpoints=({"port": "metrics", "path": "/metrics"},),
                source="volcano-sh/volcano:installer/helm/chart/volcano/templates/scheduler.yaml "
                "(<release>-scheduler-service, custom.scheduler_metrics_enable: true by default)",
            )
        )

    for runtime, models, port in (
        ("vllm", scope.vllm_models, names.VLLM_METRICS_PORT),
        ("triton", scope.triton_models, names.TRITON_METRICS_PORT),
    ):
        if models:
            targets.append(
                ScrapeTarget(
                    runtime,
                    "PodMonitor",
                    SERVING_NAMESPACE,
                    selector={
                        "matchLabels": {names.PART_OF_LABEL: names.PLATFORM_PART_OF},
                        "matchExpressions": [{"key": names.MODEL_LABEL, "operator": "In", "values": list(models)}],
                    },
                    endpoints=({"portNumber": port, "path": "/metrics", "relabelings": [model, pool]},),
                    attach_node_metadata=True,
                    source="components/k8s/names.py (model-server pod labels and ports, set by the KServe capability)",
                )
            )

    if scope.disaggregated_models:
        # KServe's pods keep its part-of label; ours add the model label (llm_inference_service.pod_labels). vLLM
        # serves /metrics on 8001 behind decode's routing sidecar and on 8000 in prefill's pods, where decode's
        # 8000 is the sidecar: that endpoint keeps the prefill role only.
        role = meta_label("__meta_kubernetes_pod_label_", llmisvc.ROLE_LABEL)
        keep_prefill = {"sourceLabels": [role], "regex": "prefill", "action": "keep"}
        targets.append(
            ScrapeTarget(
                "vllm-disaggregated",
                "PodMonitor",
                SERVING_NAMESPACE,
                selector={
                    "matchLabels": llmisvc.workload_labels_of_any_model(),
                    "matchExpressions": [
                        {"key": names.MODEL_LABEL, "operator": "In", "values": list(scope.disaggregated_models)}
                    ],
                },
                endpoints=(
                    {
                        "portNumber": llmisvc.ENGINE_PORTS["decode"],
                        "path": "/metrics",
                        "relabelings": [model, pool],
                    },
                    {
                        "portNumber": llmisvc.ENGINE_PORTS["prefill"],
                        "path": "/metrics",
                        "relabelings": [keep_prefill, model, pool],
                    },
                ),
                attach_node_metadata=True,
                source="kserve/kserve@v0.20.0:charts/kserve-runtime-configs/files/llmisvcconfigs/resources.yaml "
                "(decode main on 8001, routing sidecar on 8000; prefill main on 8000), pkg/constants/constants.go "
                "(llm-d.ai/role)",
            )
        )

    if scope.models:
        targets.append(
            ScrapeTarget(
                "endpoint-picker",
                "ServiceMonitor",
                SERVING_NAMESPACE,
                # The EPP Service is `<release>-epp`, labelled app.kubernetes.io/name=<release>-epp.
                selector={"matchExpressions": [{"key": "app.kubernetes.io/name", "operator": "Exists"}]},
                endpoints=(
                    {
                        "port": "http-metrics",
                        "path": "/metrics",
                        # --metrics-endpoint-auth defaults to true: Prometheus presents its own service
                        # account token (kube-prometheus-stack grants it GET on /metrics).
                        "bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
                        "relabelings": [
                            {
                                "sourceLabels": [
                                    meta_label("__meta_kubernetes_service_label_", "app.kubernetes.io/name")
                                ],
                                "regex": ".+-epp",
                                "action": "keep",
                            }
                        ],
                    },
                ),
                source="llm-d/llm-d-router@v0.9.0:config/charts/routerlib/templates/_service.yaml, _helpers.tpl "
                "(llm-d-router.name: <release>-epp), pkg/epp/server/options.go L218 (--metrics-endpoint-auth)",
            )
        )
        targets.append(
            ScrapeTarget(
                "envoy-proxy",
                "PodMonitor",
                names.ENVOY_GATEWAY_NAMESPACE,
                selector={
                    "matchLabels": {
                        "app.kubernetes.io/name": "envoy",
                        "app.kubernetes.io/component": "proxy",
                        "app.kubernetes.io/managed-by": "envoy-gateway",
                    }
                },
                endpoints=(
                    {"port": "metrics", "path": "/stats/prometheus"},  # Envoy's own stats
                    # AI Gateway ext_proc sidecar, gen_ai_* metrics on its admin port (named aigw-admin,
                    # and aigw-metrics in releases before v0.4): matched by number.
                    {"portNumber": 1064, "path": "/metrics"},
                ),
                source="envoyproxy/gateway:internal/infrastructure/kubernetes/proxy/testdata/deployments/default.yaml; "
                "envoyproxy/ai-gateway:internal/controller/gateway_mutator.go (extProcAdminPort 1064)",
            )
        )
        if scope.has_tenants:
            targets.append(
                ScrapeTarget(
                    "envoy-ratelimit",
                    "ServiceMonitor",
                    names.ENVOY_GATEWAY_NAMESPACE,
                    selector={
                        "matchLabels": {
                            "app.kubernetes.io/name": "envoy-ratelimit",
                            "app.kubernetes.io/component": "ratelimit",
                            "app.kubernetes.io/managed-by": "envoy-gateway",
                        }
                    },
                    endpoints=({"port": "metrics", "path": "/metrics"},),
                    source="envoyproxy/gateway:internal/infrastructure/kubernetes/ratelimit/testdata/services/"
                    "envoy-ratelimit-service-default.yaml",
                )
            )

    if scope.model_cache:
        targets.append(
            ScrapeTarget(
                "alluxio",
                "ServiceMonitor",
                MODEL_CACHE_NAMESPACE,
                # Fluid labels the runtime's master Service monitor=alluxio_runtime_metrics (Prometheus on
                # unless AlluxioRuntime.spec.disablePrometheus); Cluster_* metrics come from the master.
                selector={"matchLabels": {"monitor": "alluxio_runtime_metrics", "role": "alluxio-master"}},
                endpoints=(
                    {
                        "port": "web",
                        "path": "/metrics/prometheus/",
                        "relabelings": [_copy("__meta_kubernetes_service_label_release", "fluid_runtime")],
                    },
                ),
                source="fluid-cloudnative/fluid:charts/alluxio/templates/master/service.yaml, "
                "integration/prometheus/prometheus.yaml",
            )
        )
    return targets
