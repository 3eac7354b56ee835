"""The pod ports the API server calls, per pinned chart: admission webhooks, CRD conversion webhooks and aggregated
APIs (APIService), each the container port behind the Service the configuration names.

A private GKE cluster's control plane reaches the nodes on 443 and 10250 only (GKE_CONTROL_PLANE_FIREWALL in
components/catalog/upstream.py); `components/gcp/gke.py` opens the others from the control plane's range.
Keyed by chart name and pinned version: a chart bump has no entry until its templates are read again
(`tests/test_gke_webhook_firewall.py` fails on a release whose chart and version are not here).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from components.catalog.charts import CLUSTERPEDIA_APISERVER_PORT

# The ports GKE's own firewall rule admits from a private cluster's control plane to its nodes.
GKE_CONTROL_PLANE_DEFAULT_PORTS = frozenset({443, 10250})


@dataclass(frozen=True)
class ApiServerBackend:
    """A pod port the API server calls: `port` at the chart's defaults, or the value at `value` when we set it."""

    serves: str
    port: int
    source: str  # repo@tag:path:line of the container port and the configuration that names its Service
    value: str | None = None  # dotted values path that overrides the port

    def port_with(self, values: Mapping[str, Any]) -> int:
        if self.value is None:
            return self.port
        current: Any = values
        for key in self.value.split("."):
            if not isinstance(current, Mapping) or key not in current:
                return self.port
            current = current[key]
        return self.port if current in ("", None) else int(current)  # KEDA's `webhooks.port` defaults to ""


# (chart name, pinned version) -> its backends; () where the chart renders no webhook or APIService at our values.
API_SERVER_BACKENDS: dict[tuple[str, str], tuple[ApiServerBackend, ...]] = {
    ("kserve-resources", "v0.20.0"): (
        ApiServerBackend(
            "KServe controller: InferenceService/ServingRuntime/pod admission webhooks (failurePolicy Fail)",
            9443,
            "kserve/kserve@v0.20.0:charts/kserve-resources/files/kserve/resources.yaml L421-422 (Service 443 -> "
            "webhook-server), L474-475 (containerPort 9443 webhook-server)",
        ),
    ),
    ("kserve-llmisvc-resources", "v0.20.0"): (
        ApiServerBackend(
            "KServe llmisvc controller: LLMInferenceService(Config) admission webhooks",
            9443,
            "kserve/kserve@v0.20.0:charts/kserve-llmisvc-resources/files/llmisvc/resources.yaml L1461-1462 "
            "(Service 443 -> webhook-server), L1514-1515 (containerPort 9443)",
        ),
    ),
    ("kserve-llmisvc-crd", "v0.20.0"): (
        ApiServerBackend(
            "LLMInferenceService conversion webhook (llmisvc-webhook-server-service, the llmisvc controller's pods)",
            9443,
            "kserve/kserve@v0.20.0:charts/kserve-llmisvc-crd/templates/serving.kserve.io_llminferenceservices.yaml "
            "L9-17 (conversion strategy Webhook, port 443); llmisvc/resources.yaml L1514-1515",
        ),
    ),
    ("kserve-crd", "v0.20.0"): (),
    ("kserve-runtime-configs", "v0.20.0"): (),
    ("gateway-helm", "v1.9.0"): (
        ApiServerBackend(
            "Envoy Gateway topology-injector webhook (pods/binding, failurePolicy Ignore)",
            9443,
            "envoyproxy/gateway@v1.9.0:charts/gateway-helm/templates/envoy-gateway-deployment.yaml L87-88; "
            "templates/envoy-proxy-topology-injector-webhook.yaml L30-40",
        ),
    ),
    ("ai-gateway-helm", "v1.1.0"): (
        ApiServerBackend(
            "Envoy AI Gateway controller's pod mutator for the Gateway's Envoy pods (failurePolicy Fail)",
            9443,
            "envoyproxy/ai-gateway@v1.1.0:manifests/charts/ai-gateway-helm/values.yaml L212-216, L235; "
            "templates/admission_webhook.yaml L15-20, L38; templates/deployment.yaml L47-49",
            value="controller.mutatingWebhook.port",
        ),
    ),
    ("ai-gateway-crds-helm", "v1.1.0"): (),
    ("volcano", "1.15.0"): (
        ApiServerBackend(
            "Volcano admission (Job, PodGroup, Queue, HyperNode webhooks, failurePolicy Fail)",
            8443,
            "volcano-sh/volcano@v1.15.1:installer/helm/chart/volcano/values.yaml L21; templates/admission.yaml "
            "L153 (--port), L208-211 (Service 443 -> admission_port)",
            value="basic.admission_port",
        ),
    ),
    ("keda", "2.20.2"): (
        ApiServerBackend(
            "KEDA admission webhooks (ScaledObject validation)",
            9443,
            "kedacore/charts@v2.20.2:keda/values.yaml L210-211; templates/webhooks/service.yaml L31-33; "
            "templates/webhooks/deployment.yaml L114",
            value="webhooks.port",
        ),
        ApiServerBackend(
            "KEDA metrics server: APIService v1beta1.external.metrics.k8s.io",
            6443,
            "kedacore/charts@v2.20.2:keda/values.yaml L531-532; templates/metrics-server/service.yaml L33-34; "
            "templates/metrics-server/deployment.yaml L131, L151",
            value="service.portHttpsTarget",
        ),
    ),
    ("fluid", "1.0.8"): (
        ApiServerBackend(
            "Fluid pod webhook (pods labelled for injection)",
            9443,
            "fluid-cloudnative/fluid@v1.0.8:charts/fluid/fluid/templates/webhook/service.yaml L8-11; "
            "templates/webhook/webhookconfiguration.yaml L18, L39; cmd/webhook/app/webhook.go L85 (--webhook-port)",
        ),
    ),
    ("kube-prometheus-stack", "88.5.3"): (
        ApiServerBackend(
            "Prometheus Operator admission webhooks (served by the operator over TLS)",
            10250,
            "prometheus-community/helm-charts@kube-prometheus-stack-88.5.3:charts/kube-prometheus-stack/values.yaml "
            "L2841-2846 ('The default webhook port is 10250 in order to work out-of-the-box in GKE private clusters')",
            value="prometheusOperator.tls.internalPort",
        ),
    ),
    ("cert-manager", "v1.21.1"): (
        ApiServerBackend(
            "cert-manager webhook (admission and conversion)",
            10250,
            "cert-manager/cert-manager@v1.21.1:deploy/charts/cert-manager/values.yaml L1085-1090; "
            "templates/webhook-deployment.yaml L96, L130-133",
            value="webhook.securePort",
        ),
    ),
    # No WebhookConfiguration or APIService in the chart at the tag (git grep over the chart directory).
    ("gpu-operator", "v26.7.0"): (),
    ("dcgm-exporter", "4.8.2"): (),
    # Agent mode renders only templates/karmada-agent.yaml (L1 `installMode "agent"`); the webhook and APIService
    # templates are host mode's.
    ("karmada", "v1.18.2"): (),
}


# Backends of the webhooks and aggregated APIs the platform renders itself, not from a chart.
RENDERED_BACKENDS: tuple[ApiServerBackend, ...] = (
    ApiServerBackend(
        "Clusterpedia API server: APIService v1beta1.clusterpedia.io (components/federation/search_index.py)",
        CLUSTERPEDIA_APISERVER_PORT,
        "components/federation/search_index.py (--secure-port; Service 443 -> it)",
    ),
)


def control_plane_webhook_ports() -> tuple[int, ...]:
    """The backend ports at the charts' defaults and of the rendered backends that GKE's own rule does not open, for
    the nodes' firewall."""
    ports = {b.port for backends in API_SERVER_BACKENDS.values() for b in backends}
    ports |= {b.port for b in RENDERED_BACKENDS}
    return tuple(sorted(ports - GKE_CONTROL_PLANE_DEFAULT_PORTS))
