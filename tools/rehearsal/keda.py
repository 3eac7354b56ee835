"""A stand-in for KEDA's operator (v2.20.2) where a cluster installs it: the kedacore/charts chart is not a Go
module, so the release's objects are not rendered, and the operator's triggers read a Prometheus the rehearsal does
not run. What KEDA does at bring-up matters to the rollout all the same: a model at zero (a ScaledObject with
minReplicaCount 0) gets a Deployment from KServe with no `replicas` (its external autoscaler class:
kserve@v0.20.0 pkg/controller/v1beta1/inferenceservice/reconcilers/deployment/deployment_reconciler.go L170-L172),
which the API server defaults to 1; KEDA's first poll (at once: pkg/scaling/scale_handler.go L187-L198) finds its
triggers inactive (no request has come) and, the ScaledObject never active and its initialCooldownPeriod 0 by
default, scales the Deployment to zero (pkg/scaling/executor/scale_scaledobjects.go L83-L101, L189-L217). The
stand-in does that for each ScaledObject at zero, once the target's pods are bound: on a cluster KEDA's first poll
races the scheduler, and the rehearsal lets the scheduler go first, so that each model's pod is seen placed in its
pool, as when a request wakes it (a model's pods that cannot be placed then, its pool held by another model at zero,
are placed when that one is scaled to zero). It never scales up, as no request reaches a model here (catalog fact
`keda-scales-an-idle-target-to-zero-at-once`). It assumes what the rehearsal cannot show: that the triggers answer
without an error (the platform's Prometheus is up; one that errors keeps the model at one replica on a cluster);
it honours what it can read: the release's `watchNamespace`, and triggers that are all cpu or memory, which KEDA
takes as always active."""

from __future__ import annotations

from typing import Any

from tools.rehearsal.kube import ApiError, KindNotServed, Kube
from tools.rehearsal.processes import ReconcileLoop

SCALED_OBJECTS = ("keda.sh/v1alpha1", "ScaledObject")
# What makes KEDA leave a target's replicas alone, never scale it in, or take it as active
# (apis/keda/v1alpha1/scaledobject_types.go L58-L67, L244-L280; scale_scaledobjects.go L53-L56, L63, L190-L194).
PAUSED_REPLICAS = "autoscaling.keda.sh/paused-replicas"
HELD = ("autoscaling.keda.sh/paused", "autoscaling.keda.sh/paused-scale-in", "autoscaling.keda.sh/force-activation")
_GO_FALSE = {"0", "f", "F", "FALSE", "false", "False"}  # strconv.ParseBool; any other value KEDA takes as true
# KEDA scales a target through its scale subresource; the API server writes spec.replicas for this manager.
MANAGER = "rehearsal-keda-stand-in"


def watched_namespaces(watch_namespace: str | None) -> set[str] | None:
    """The namespaces the operator watches, from the chart's `watchNamespace` (its WATCH_NAMESPACE: a comma-separated
    list; "" all, as None: keda@v2.20.2 pkg/util/watch.go L14-L31)."""
    if not watch_namespace or watch_namespace == '""':
        return None
    return set(watch_namespace.split(","))


def idle_target(scaled_object: dict[str, Any]) -> tuple[str, str, str] | None:
    """(apiVersion, kind, name) of the target KEDA scales to zero while no trigger is active: a ScaledObject with
    minReplicaCount 0 (its default), no idleReplicaCount, neither paused nor forced active, and a trigger other than
    cpu or memory (with only those, KEDA takes it as active: pkg/scaling/scale_handler.go L821-L828, L918-L922);
    None otherwise."""
    spec = scaled_object.get("spec") or {}
    annotations = scaled_object["metadata"].get("annotations") or {}
    if spec.get("minReplicaCount", 0) != 0 or spec.get("idleReplicaCount") is not None:
        return None
    if all(trigger.get("type") in ("cpu", "memory") for trigger in spec.get("triggers") or []):
        return None
    if PAUSED_REPLICAS in annotations or any(key in annotations and annotations[key] not in _GO_FALSE for key in HELD):
        return None
    target = spec.get("scaleTargetRef") or {}
    return target.get("apiVersion", "apps/v1"), target.get("kind", "Deployment"), target["name"]


class KedaStandIn(ReconcileLoop):
    def __init__(self, kube: Kube, cluster: str, watch_namespace: str | None = None):
        """`watch_namespace`: the release's `watchNamespace` value (where its operator looks for ScaledObjects)."""
        super().__init__("KEDA", cluster)
        self.kube, self.cluster = kube, cluster
        self.namespaces = watched_namespaces(watch_namespace)
        # "<namespace>/<target>" -> (node, labels) of each of its pods, all bound, when it was scaled to zero
        self.scaled: dict[str, list[tuple[str, dict[str, str]]]] = {}

    def reconcile(self) -> None:
        try:
            scaled_objects = self.kube.list(*SCALED_OBJECTS)
        except KindNotServed:
            return
        for scaled_object in scaled_objects:
            if self.namespaces is not None and scaled_object["metadata"]["namespace"] not in self.namespaces:
                continue
            target = idle_target(scaled_object)
            if target is None:
                continue
            api_version, kind, name = target
            namespace = scaled_object["metadata"]["namespace"]
            live = self.kube.get(api_version, kind, name, namespace)
            if live is None or not (live.get("spec") or {}).get("replicas"):
                continue  # KEDA waits for its target, and has nothing to do at zero
            pods = self._bound_pods(live, namespace)
            if pods is None:
                continue  # the scheduler first (module docstring)
            try:
                self.kube.scale(api_version, kind, namespace, name, 0, field_manager=MANAGER)
            except ApiError as exc:
                if exc.status not in (404, 409):  # gone, or changed since read: the next round sees it again
                    raise
                continue
            self.scaled[f"{namespace}/{name}"] = pods

    def _bound_pods(self, workload: dict[str, Any], namespace: str) -> list[tuple[str, dict[str, str]]] | None:
        """(node, labels) of the workload's pods when every one is bound; None while one is not, or none exists
        yet, or the workload selects nothing by label."""
        labels = ((workload.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        if not labels:
            return None
        selector = ",".join(f"{k}={v}" for k, v in labels.items())
        pods = [
            pod
            for pod in self.kube.list("v1", "Pod", namespace, selector=selector)
            if not pod["metadata"].get("deletionTimestamp")
        ]
        nodes = [(pod.get("spec") or {}).get("nodeName") for pod in pods]
        if not pods or not all(nodes):
            return None
        return [(str(node), pod["metadata"].get("labels") or {}) for node, pod in zip(nodes, pods, strict=True)]
