"""When `helm install --wait` takes an object of a release as ready, as Helm v3.20.2's ReadyChecker judges it
(catalog fact `helm-wait-readiness`, components/catalog/upstream.py HELM_WAIT_READINESS).

Helm's wait is not the provider's: it reads the live object and its controller's status, asks a Deployment or a
DaemonSet only for its rollout's floor (`replicas - maxUnavailable` ready), a Service only for an address, and a
Job only with waitForJobs. The rehearsal judges a release's objects with this (tools/rehearsal/releases.py
ReleaseWait looks at them all on each look, as Helm's poll does), so it passes what Helm passes and fails what Helm
fails, with one addition: a Deployment's, DaemonSet's or StatefulSet's count of ready pods is taken only as far as
its pods themselves are Ready (kwok's first word for a pod is taken back by the rehearsal's kubelet a moment later,
tools/rehearsal/kubelet.py, and a controller's status can still hold it). A release's templated CRDs are not judged
here: the rehearsal waits for them to be established and served before it creates the release's other objects
(runner.wait_crds_established), which asks more than Helm's Established."""

from __future__ import annotations

import math
import re
from typing import Any

from tools.rehearsal.kube import Kube, is_ready

# The kinds Helm's ReadyChecker checks (pkg/kube/ready.go L92-L205), by API group, templated CRDs aside (above); any
# other kind is ready once created. A Job only with waitForJobs (L99-L107).
CHECKED_KINDS = {
    ("", "Pod"),
    ("batch", "Job"),
    ("apps", "Deployment"),
    ("", "PersistentVolumeClaim"),
    ("", "Service"),
    ("apps", "DaemonSet"),
    ("apps", "StatefulSet"),
    ("", "ReplicationController"),
    ("apps", "ReplicaSet"),
}
POD_TEMPLATE_HASH = "pod-template-hash"  # apps.DefaultDeploymentUniqueLabelKey
NOT_FOUND = "not found"  # what ends Helm's wait at once (a NotFound error is not retried: wait.go L93-L110)
_GO_INT = re.compile(r"[+-]?\d+")  # what strconv.Atoi parses


def _group(obj: dict[str, Any]) -> str:
    return obj["apiVersion"].rpartition("/")[0]


def waited(obj: dict[str, Any], *, wait_for_jobs: bool) -> bool:
    """Whether Helm's wait checks `obj` (Pulumi's skipAwait annotation is the provider's, not Helm's)."""
    key = (_group(obj), obj["kind"])
    return key in CHECKED_KINDS and (wait_for_jobs or key != ("batch", "Job"))


def _value_of(value: int | str, total: int, *, round_up: bool, percent_required: bool) -> int | None:
    """k8s.io/apimachinery@v0.35.1 pkg/util/intstr: an int as is; a string as a percentage of `total`, rounded up or
    down. GetScaledValueFromIntOrPercent (`percent_required`) refuses a string without "%"; the deprecated
    GetValueFromIntOrPercent, which Helm's Deployment path calls, reads "5" as 5 %. None: refused."""
    if isinstance(value, int):
        return value
    if percent_required and not value.endswith("%"):
        return None
    digits = value.replace("%", "")
    if not _GO_INT.fullmatch(digits):
        return None
    share = int(digits) * total / 100
    return math.ceil(share) if round_up else math.floor(share)


def deployment_max_unavailable(deployment: dict[str, Any]) -> int:
    """deploymentutil.MaxUnavailable and ResolveFenceposts (Helm's internal/third_party copy, L137-L148,
    L159-L178): 0 unless rolling; maxSurge rounded up and maxUnavailable down (1 when both come to 0), at most
    `replicas`; a value it cannot read makes 0."""
    spec = deployment.get("spec") or {}
    replicas = spec.get("replicas", 1)
    strategy = spec.get("strategy") or {}
    if strategy.get("type") != "RollingUpdate" or replicas == 0:
        return 0
    rolling = strategy.get("rollingUpdate") or {}
    surge = _value_of(rolling.get("maxSurge", 0), replicas, round_up=True, percent_required=False)
    unavailable = _value_of(rolling.get("maxUnavailable", 0), replicas, round_up=False, percent_required=False)
    if surge is None or unavailable is None:
        return 0
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return min(unavailable, replicas)


def selector_text(selector: dict[str, Any] | None) -> str:
    """A label selector as the API's `labelSelector` parameter (metav1.LabelSelectorAsSelector): its matchLabels and
    matchExpressions; "" for none."""
    if not selector:
        return ""
    terms = [f"{k}={v}" for k, v in (selector.get("matchLabels") or {}).items()]
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        terms.append(
            {
                "In": f"{key} in ({','.join(values)})",
                "NotIn": f"{key} notin ({','.join(values)})",
                "Exists": key,
                "DoesNotExist": f"!{key}",
            }[operator]
        )
    return ",".join(terms)


def _pods(kube: Kube, live: dict[str, Any]) -> list[dict[str, Any]]:
    """The pods a workload selects (a ReplicationController's selector is a plain map). None selected by an empty
    selector: Helm's SelectorsForObject refuses one, and a controller's pods always have one."""
    selector = (live.get("spec") or {}).get("selector") or {}
    text = selector_text({"matchLabels": selector} if live.get("kind") == "ReplicationController" else selector)
    return kube.list("v1", "Pod", live["metadata"].get("namespace"), selector=text) if text else []


def _ready_pods(kube: Kube, live: dict[str, Any]) -> int:
    return sum(1 for pod in _pods(kube, live) if is_ready(pod) and not pod["metadata"].get("deletionTimestamp"))


def _generation_seen(live: dict[str, Any]) -> bool:
    return (live.get("status") or {}).get("observedGeneration", 0) == live["metadata"].get("generation", 0)


def _without_hash(template: dict[str, Any]) -> dict[str, Any]:
    metadata = dict(template.get("metadata") or {})
    labels = {k: v for k, v in (metadata.get("labels") or {}).items() if k != POD_TEMPLATE_HASH}
    return {**template, "metadata": {**metadata, "labels": labels}}


def new_replica_set(kube: Kube, deployment: dict[str, Any]) -> dict[str, Any] | None:
    """deploymentutil.GetNewReplicaSet (ListReplicaSets L42-L63, FindNewReplicaSet L77-L91): of the ReplicaSets the
    Deployment's selector selects and it controls, the oldest (by creation time, then name) whose pod template is
    the Deployment's, the pod-template-hash label aside."""
    meta = deployment["metadata"]
    selected = kube.list(
        "apps/v1", "ReplicaSet", meta["namespace"], selector=selector_text(deployment["spec"].get("selector"))
    )
    owned = [
        rs
        for rs in selected
        if any(
            ref.get("controller") and ref.get("uid") == meta.get("uid")
            for ref in rs["metadata"].get("ownerReferences") or []
        )
    ]
    owned.sort(key=lambda rs: (rs["metadata"].get("creationTimestamp", ""), rs["metadata"]["name"]))
    template = _without_hash(deployment["spec"]["template"])
    return next((rs for rs in owned if _without_hash(rs["spec"]["template"]) == template), None)


def ready(kube: Kube, obj: dict[str, Any], *, wait_for_jobs: bool) -> tuple[bool, str]:
    """Is the release's `obj`, one Helm's wait checks (`waited`), ready as that wait judges it? (ready, what was
    seen); NOT_FOUND when it is gone."""
    meta = obj["metadata"]
    live = kube.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
    if live is None:
        return False, NOT_FOUND
    spec, status = live.get("spec") or {}, live.get("status") or {}
    match obj["kind"]:
        case "Pod":
            return is_ready(live), f"phase {status.get('phase', 'Pending')}"
        case "Job" if wait_for_jobs:
            limit = spec.get("backoffLimit", 6)
            if status.get("failed", 0) > limit:  # an error, which Helm retries 30 times (wait.go L61-L76)
                return False, f"failed ({status['failed']} failures, backoffLimit {limit})"
            completions = spec.get("completions")
            done = completions is None or status.get("succeeded", 0) >= completions
            return done, f"{status.get('succeeded', 0)} of {completions} completions"
        case "Deployment":
            return _deployment_ready(kube, live)
        case "PersistentVolumeClaim":
            phase = status.get("phase", "Pending")
            return phase == "Bound", f"phase {phase}"
        case "Service":
            return _service_ready(live)
        case "DaemonSet":
            return _daemon_set_ready(kube, live)
        case "StatefulSet":
            return _stateful_set_ready(kube, live)
        case "ReplicationController" | "ReplicaSet":
            pods = _pods(kube, live)
            not_ready = sum(1 for pod in pods if not is_ready(pod))
            return _generation_seen(live) and not not_ready, f"{not_ready} of {len(pods)} pods not ready"
    return True, "ready"


def _deployment_ready(kube: Kube, live: dict[str, Any]) -> tuple[bool, str]:
    """ready.go L108-L124, L290-L307: paused counts as ready; else the new ReplicaSet's ready replicas reach
    `replicas - maxUnavailable`, both its and the Deployment's generation observed."""
    spec = live.get("spec") or {}
    if spec.get("paused"):
        return True, "paused"
    rs = new_replica_set(kube, live)
    if rs is None:
        return False, "no new ReplicaSet yet"
    expected = spec.get("replicas", 1) - deployment_max_unavailable(live)
    have = min((rs.get("status") or {}).get("readyReplicas", 0), _ready_pods(kube, rs))
    seen = _generation_seen(rs) and _generation_seen(live)
    return seen and have >= expected, f"{have} ready of {expected} needed ({spec.get('replicas', 1)} replicas)"


def _service_ready(live: dict[str, Any]) -> tuple[bool, str]:
    """ready.go L253-L280: an ExternalName Service is ready; others need a cluster IP, and a LoadBalancer an
    external IP or its ingress (an empty list is one: Go tests it for nil)."""
    spec = live.get("spec") or {}
    if spec.get("type") == "ExternalName":
        return True, "ready"
    if not spec.get("clusterIP"):
        return False, "no cluster IP"
    ingress = ((live.get("status") or {}).get("loadBalancer") or {}).get("ingress")
    if spec.get("type") == "LoadBalancer" and not spec.get("externalIPs") and ingress is None:
        return False, "no load balancer ingress"
    return True, "ready"


def _not_rolling(live: dict[str, Any]) -> tuple[bool, str] | None:
    """What a DaemonSet's or StatefulSet's check says before its rollout is looked at (ready.go L311-L319,
    L387-L396): not ready while its generation is not observed, ready unless it rolls; None: it rolls."""
    if not _generation_seen(live):
        return False, "generation not observed"
    kind = ((live.get("spec") or {}).get("updateStrategy") or {}).get("type")
    return None if kind == "RollingUpdate" else (True, f"update strategy {kind}")


def _daemon_set_ready(kube: Kube, live: dict[str, Any]) -> tuple[bool, str]:
    """ready.go L309-L340: generation observed; an OnDelete DaemonSet is ready; a rolling one has every desired
    pod updated and `desired - maxUnavailable` (rounded up from a percentage; all of them when it cannot be read)
    ready."""
    spec, status = live.get("spec") or {}, live.get("status") or {}
    settled = _not_rolling(live)
    if settled is not None:
        return settled
    strategy = spec["updateStrategy"]
    desired = status.get("desiredNumberScheduled", 0)
    if status.get("updatedNumberScheduled", 0) != desired:
        return False, f"{status.get('updatedNumberScheduled', 0)}/{desired} pods updated"
    value = (strategy.get("rollingUpdate") or {}).get("maxUnavailable")
    unavailable = None if value is None else _value_of(value, desired, round_up=True, percent_required=True)
    expected = desired - (desired if unavailable is None else unavailable)
    have = min(status.get("numberReady", 0), _ready_pods(kube, live))
    return have >= expected, f"{have} ready of {expected} needed ({desired} desired)"


def _stateful_set_ready(kube: Kube, live: dict[str, Any]) -> tuple[bool, str]:
    """ready.go L385-L438: generation observed; an OnDelete StatefulSet is ready; a rolling one has its
    partition's pods updated, exactly `replicas` ready and (partition 0) its current revision the update
    revision."""
    spec, status = live.get("spec") or {}, live.get("status") or {}
    settled = _not_rolling(live)
    if settled is not None:
        return settled
    strategy = spec["updateStrategy"]
    partition = (strategy.get("rollingUpdate") or {}).get("partition") or 0
    replicas = spec.get("replicas", 1)
    if status.get("updatedReplicas", 0) < replicas - partition:
        return False, f"{status.get('updatedReplicas', 0)}/{replicas - partition} replicas updated"
    have = min(status.get("readyReplicas", 0), _ready_pods(kube, live))
    if have != replicas:
        return False, f"{have}/{replicas} replicas ready"
    if partition == 0 and status.get("currentRevision") != status.get("updateRevision"):
        return False, "current revision is not the update revision"
    return True, f"{have}/{replicas} replicas ready"
