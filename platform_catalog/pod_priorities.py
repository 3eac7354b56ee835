"""The priority classes of the pods each pinned Helm chart runs, and of those its controller creates.

GKE admits a pod of a system-*-critical class outside kube-system only with a ResourceQuota scoped to that class
(components/catalog/upstream.py GKE_CRITICAL_PODS_NEED_QUOTA): the program creates the quota where a release needs
it (components/k8s/helm.py) and the policy pack checks that every such namespace has one. Keyed by chart name, one
entry for every chart components/catalog/charts.py pins: a release of a chart not listed here is one whose pods'
classes the pack cannot know.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# GKE limits these classes by default (ResourceQuota admission `limitedResources`), as kube-system's own
# `gcp-critical-pods` quota shows: a pod using one outside kube-system needs a quota scoped to it.
GKE_CRITICAL_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")


@dataclass(frozen=True)
class PodPriority:
    """A priority class some of a chart's pods run with: set by a values key, or hard-coded in a template."""

    default: str  # the class when `value` is not set ("" : none)
    value: str | None = None  # dotted values path that overrides it; None when a template hard-codes it
    template: str = ""  # where a hard-coded class is, at the pinned tag


@dataclass(frozen=True)
class CreatedPods:
    """Pods a chart's controller creates for each custom resource of a kind, in that resource's namespace."""

    kind: str  # `<group>/<Kind>` of the custom resource
    priority: str  # their priority class when `enabled_by` is true
    enabled_by: str  # dotted values path of the boolean that gives them the class
    enabled_default: bool  # its value in the chart's defaults


@dataclass(frozen=True)
class ChartPods:
    """The priority classes of one chart's pods (value-keyed defaults as in its upstream values) and the pods its
    controller creates outside the release's namespace, for the custom resources it reconciles."""

    pod_priorities: tuple[PodPriority, ...] = ()
    created_pods: tuple[CreatedPods, ...] = ()

    def created_pod_classes(self, values: Mapping[str, Any], kind: str) -> set[str]:
        """The priority classes of the pods the chart's controller creates for a `kind` resource, with `values`."""
        classes = set()
        for pods in self.created_pods:
            enabled = _lookup(values, pods.enabled_by)
            if pods.kind == kind and (pods.enabled_default if enabled is None else bool(enabled)):
                classes.add(pods.priority)
        return classes

    def priority_classes(self, values: Mapping[str, Any]) -> set[str]:
        """The priority classes this chart's pods get with our `values` over the chart's defaults."""
        classes = set()
        for priority in self.pod_priorities:
            chosen = _lookup(values, priority.value) if priority.value else None
            classes.add(priority.default if chosen is None else chosen)
        return classes - {""}


def _lookup(values: Mapping[str, Any], dotted: str) -> Any:
    """values["a"]["b"] for "a.b"; None when any level is missing."""
    current: Any = values
    for key in dotted.split("."):
        if not isinstance(current, Mapping) or key not in current:
            return None
        current = current[key]
    return current


CHART_PODS: dict[str, ChartPods] = {
    "volcano": ChartPods(
        # No values key: the templates hard-code it (installer/helm/chart/volcano/templates at v1.15.1).
        pod_priorities=tuple(
            PodPriority("system-cluster-critical", template=t)
            for t in ("scheduler.yaml L191", "controllers.yaml L163", "admission.yaml L131", "admission-init.yaml L98")
        ),
    ),
    "gpu-operator": ChartPods(
        pod_priorities=tuple(
            PodPriority("system-node-critical", value=v)
            for v in (
                "operator.priorityClassName",
                "daemonsets.priorityClassName",
                "node-feature-discovery.priorityClassName",
            )
        ),
    ),
    "aws-efa-k8s-device-plugin": ChartPods(),
    "fluid": ChartPods(
        # Each AlluxioRuntime's FUSE DaemonSet (components/catalog/upstream.py FLUID_CONTROLLER_CREATES_CRITICAL_FUSE_PODS).
        created_pods=(
            CreatedPods(
                "data.fluid.io/AlluxioRuntime",
                "system-node-critical",
                enabled_by="runtime.criticalFusePod",
                enabled_default=True,
            ),
        ),
    ),
    "dcgm-exporter": ChartPods(
        pod_priorities=(PodPriority("system-node-critical", value="priorityClassName"),),
    ),
    "kube-prometheus-stack": ChartPods(),
    "gateway-helm": ChartPods(),
    "ai-gateway-crds-helm": ChartPods(),
    "ai-gateway-helm": ChartPods(),
    "kserve-crd": ChartPods(),
    "kserve-resources": ChartPods(),
    "kserve-llmisvc-crd": ChartPods(),
    "kserve-llmisvc-resources": ChartPods(),
    "kserve-runtime-configs": ChartPods(),
    "cert-manager": ChartPods(
        pod_priorities=(PodPriority("", value="global.priorityClassName"),),
    ),
    "keda": ChartPods(),
    "cluster-autoscaler": ChartPods(
        pod_priorities=(PodPriority("system-cluster-critical", value="priorityClassName"),),
    ),
    "karmada": ChartPods(
        # Every component's own key (host mode renders the control plane's, agent mode the agent's).
        pod_priorities=tuple(
            PodPriority("system-node-critical", value=f"{component}.priorityClassName")
            for component in (
                "scheduler",
                "webhook",
                "controllerManager",
                "apiServer",
                "aggregatedApiServer",
                "metricsAdapter",
                "kubeControllerManager",
                "etcd.internal",
                "agent",
                "schedulerEstimator",
                "descheduler",
                "search",
            )
        ),
    ),
    "clusterpedia": ChartPods(),
}
