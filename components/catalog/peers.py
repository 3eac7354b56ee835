"""Labels and ports of upstream pods that NetworkPolicies select as peers, each with its source.

A NetworkPolicy peer is a label selector: when upstream renames a label, the policy silently
selects nothing and the traffic it allowed is dropped, so these live once, here.
"""

from __future__ import annotations

# Envoy proxy pods Envoy Gateway v1.9.0 creates for a Gateway, in its own namespace
# [envoyproxy/gateway@v1.9.0:internal/infrastructure/kubernetes/proxy/resource.go EnvoyAppLabel;
# internal/gatewayapi/translator.go OwningGatewayNameLabel].
ENVOY_PROXY_LABELS = {
    "app.kubernetes.io/name": "envoy",
    "app.kubernetes.io/component": "proxy",
    "app.kubernetes.io/managed-by": "envoy-gateway",
}
OWNING_GATEWAY_LABEL = "gateway.envoyproxy.io/owning-gateway-name"
# Envoy listens on a Gateway listener port below 1024 at that port + 10000 in the pod
# [envoyproxy/gateway@v1.9.0:internal/gatewayapi/listener.go servicePortToContainerPort; translator.go].
ENVOY_WELL_KNOWN_PORT_SHIFT = 10000

# Pods of a Prometheus the Prometheus Operator runs (kube-prometheus-stack's): the operator labels them
# with the application name [prometheus-operator/prometheus-operator:pkg/prometheus/statefulset.go].
PROMETHEUS_POD_LABELS = {"app.kubernetes.io/name": "prometheus"}

# The label Kubernetes sets on every namespace (kubernetes.io/docs/reference/labels-annotations-taints),
# which namespaceSelectors match a namespace by name with.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

# Knative Serving's activator, which buffers requests for Knative-mode model servers at zero
# (knative/serving:config/core/deployments/activator.yaml, namespace knative-serving).
KNATIVE_ACTIVATOR = ("knative-serving", {"app": "activator"})

# Envoy Gateway's controller pods, and the port of its topology-injector webhook (pods/binding in its namespace,
# failurePolicy Ignore: blocked, each Envoy pod's binding waits out the webhook timeout and gets no zone labels)
# [envoyproxy/gateway@v1.9.0:charts/gateway-helm/templates/envoy-gateway-deployment.yaml L11, L23, L87-88;
# templates/envoy-proxy-topology-injector-webhook.yaml L30-40; values.tmpl.yaml topologyInjector.enabled: true].
ENVOY_GATEWAY_CONTROLLER_LABELS = {"control-plane": "envoy-gateway"}
ENVOY_GATEWAY_WEBHOOK_PORT = 9443
