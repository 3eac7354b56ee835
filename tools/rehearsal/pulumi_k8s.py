"""What pulumi-kubernetes does with one rendered object on the first `pulumi up`, replayed against a rehearsal
cluster: create it (or server-side apply a Patch), then wait for it as the provider waits.

Catalog fact `pulumi-kubernetes-creates-objects` (components/catalog/upstream.py PULUMI_CREATES_OBJECTS) states
the behaviour with its source; in short, with the provider's defaults (server-side apply mode, upsertExistingObjects
off):
- an object is created (POST, field manager `pulumi-kubernetes`); one that already exists fails the `up`;
- a `*Patch` resource is a server-side apply with its own field manager (`pulumi.com/patchFieldManager`, else
  `pulumi-kubernetes-<random>`), forced only with `pulumi.com/patchForce: "true"`;
- a kind the server does not serve yet (its CRD not installed) or a namespace not there yet is retried 5 times
  with doubling back-off, then fails;
- Deployments, StatefulSets, DaemonSets, Jobs, Pods, Services and PersistentVolumeClaims are then awaited (10
  minutes by default); custom resources are not (generic await is opt-in, PULUMI_K8S_AWAIT_ALL);
- a ServiceAccount token Secret is awaited until the token controller fills its data, 5 seconds, then fails.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tools.rehearsal.kube import ApiError, KindNotServed, Kube, is_ready

CREATE_FIELD_MANAGER = "pulumi-kubernetes"
PATCH_FIELD_MANAGER_ANNOTATION = "pulumi.com/patchFieldManager"
PATCH_FORCE_ANNOTATION = "pulumi.com/patchForce"
SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait"
CREATE_RETRIES = 5
AWAITED_KINDS = {
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("batch/v1", "Job"),
    ("v1", "Pod"),
    ("v1", "Service"),
    ("v1", "PersistentVolumeClaim"),
}
# Each event of a Service's Endpoints starts a timer this long that marks them settled; the provider takes the Service as
# ready only while they are (upstream.PULUMI_SERVICE_AWAITS_SETTLED_ENDPOINTS).
SERVICE_SETTLE_SECONDS = 10.0
# How long the provider waits for what it awaits, unless a resource's customTimeouts say otherwise (the same default
# for each kind: pulumi-kubernetes@v4.32.0:provider/pkg/await/service.go L80, L158; deployment.go L105;
# statefulset.go L152; pod.go L106; job.go L79).
PROVIDER_TIMEOUT_SECONDS = 600.0
# A Secret of this type is awaited until its data is filled (by kube-controller-manager's token controller), for a
# time the provider hard-codes; then the create fails (pulumi-kubernetes@v4.32.0:provider/pkg/await/awaiters.go
# L431-L462, provider/pkg/watcher/watcher.go L67-L80, L107-L130).
TOKEN_SECRET_TYPE = "kubernetes.io/service-account-token"
TOKEN_SECRET_AWAIT_SECONDS = 5.0
# The provider waits 10 minutes; a rehearsal's kwok pods are Ready within seconds of being bound, so what is not
# ready after this long is reported with what blocks it rather than waited for.
AWAIT_SECONDS = 60.0


def describe(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj['kind']} {where}{meta.get('name')}"


def patch_field_manager(obj: dict[str, Any], urn: str) -> str:
    """The Patch's own field manager: its annotation, else `pulumi-kubernetes-` and a suffix unique to the
    resource (the provider draws it at random once and keeps it in the state; here it is derived from the URN)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return (
        annotations.get(PATCH_FIELD_MANAGER_ANNOTATION)
        or f"pulumi-kubernetes-{hashlib.sha256(urn.encode()).hexdigest()[:8]}"
    )


@dataclass
class Outcome:
    ok: bool
    detail: str


def create_or_patch(kube: Kube, obj: dict[str, Any], *, urn: str, patch: bool, sleep=time.sleep) -> Outcome:
    """One resource as the provider creates it; a kind not served or a namespace not found is retried as the
    provider retries (here with a second's base, the provider's back-off being shorter than any release)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    for attempt in range(CREATE_RETRIES + 1):
        try:
            if patch:
                kube.apply(
                    obj,
                    field_manager=patch_field_manager(obj, urn),
                    force=annotations.get(PATCH_FORCE_ANNOTATION) == "true",
                )
                return Outcome(True, "applied (server-side apply)")
            kube.create(obj, field_manager=CREATE_FIELD_MANAGER)
            return Outcome(True, "created")
        except KindNotServed as exc:
            error: ApiError = exc
        except ApiError as exc:
            if exc.status == 409 and exc.reason == "AlreadyExists":
                return Outcome(False, f"already exists: the create fails (pulumi-kubernetes: {exc.message})")
            if not (exc.status == 404 and "namespaces" in exc.message):
                return Outcome(False, f"refused by the API server: {exc}")
            error = exc
        if attempt < CREATE_RETRIES:
            sleep(min(2**attempt * 0.25, 2.0))
            kube.forget()  # the provider rebuilds its client's view of the server on every retry
    return Outcome(False, f"{error.message} (after {CREATE_RETRIES} retries)")


def _token_secret(obj: dict[str, Any]) -> bool:
    return (obj["apiVersion"], obj["kind"]) == ("v1", "Secret") and obj.get("type") == TOKEN_SECRET_TYPE


def awaited(obj: dict[str, Any]) -> bool:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    kind = (obj["apiVersion"], obj["kind"]) in AWAITED_KINDS or _token_secret(obj)
    return kind and annotations.get(SKIP_AWAIT_ANNOTATION) != "true"


def await_seconds(obj: dict[str, Any]) -> float:
    """How long the rehearsal waits for an awaited object: a token Secret's data the provider's own 5 s (a failure
    after it), anything else AWAIT_SECONDS (the provider's 10 minutes, reported sooner with what blocks it)."""
    return TOKEN_SECRET_AWAIT_SECONDS if _token_secret(obj) else AWAIT_SECONDS


def probe_ready(kube: Kube, obj: dict[str, Any]) -> tuple[bool, str]:
    """Is `obj` ready as the provider judges it? (ready, what was seen). Helm's wait judges otherwise
    (tools/rehearsal/helm_wait.py)."""
    meta = obj["metadata"]
    live = kube.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
    if live is None:
        return False, "not found"
    return _ready(kube, obj["kind"], live)


def not_ready(obj: dict[str, Any], last: str, timeout: float, why_pending: Callable[[str, str], str]) -> str:
    selector = _selector(obj)
    reason = why_pending(obj["metadata"].get("namespace"), selector) if selector else ""
    return f"not ready after {timeout:.0f} s: {last}{'; ' + reason if reason else ''}"


def _binding_mode(kube: Kube, storage_class: str | None) -> str:
    """The claim's StorageClass's volumeBindingMode ("" when the class is not there: the provider then waits for
    Bound, pulumi-kubernetes@v4.32.0:provider/pkg/await/awaiters.go L288-L322)."""
    if not storage_class:
        defaults = [
            c
            for c in kube.list("storage.k8s.io/v1", "StorageClass")
            if (c["metadata"].get("annotations") or {}).get("storageclass.kubernetes.io/is-default-class") == "true"
        ]
        found = defaults[0] if defaults else None
    else:
        found = kube.get("storage.k8s.io/v1", "StorageClass", storage_class)
    return (found or {}).get("volumeBindingMode", "")


def waits_for_endpoints(obj: dict[str, Any]) -> bool:
    """A Service the provider waits on for pods: one with a selector, neither headless nor ExternalName
    (service.go shouldWaitForPods)."""
    spec = obj.get("spec") or {}
    return (
        obj["kind"] == "Service"
        and bool(spec.get("selector"))
        and spec.get("type") != "ExternalName"
        and spec.get("clusterIP") != "None"
    )


def endpoints_version(kube: Kube, service: dict[str, Any]) -> str | None:
    """The resourceVersion of the Service's v1 Endpoints (None: none yet): a change restarts the settle."""
    meta = service["metadata"]
    found = kube.get("v1", "Endpoints", meta["name"], meta.get("namespace"))
    return None if found is None else str(found["metadata"].get("resourceVersion"))


def _endpoints_ready(kube: Kube, live: dict[str, Any]) -> tuple[bool, str]:
    """The provider's test of a Service's v1 Endpoints: no subset lists an address that is not ready. It does not
    ask for a ready one (service.go L416; its own test 'Should succeed with no endpoints'): what the wait adds is the
    settle, after which the endpoints controller has had 10 s to list the pods Helm's wait saw Ready."""
    meta = live["metadata"]
    found = kube.get("v1", "Endpoints", meta["name"], meta.get("namespace")) or {}
    subsets = found.get("subsets") or []
    ready = sum(len(s.get("addresses") or []) for s in subsets)
    pending = sum(len(s.get("notReadyAddresses") or []) for s in subsets)
    return not pending, f"{ready} ready and {pending} not ready endpoint address(es)"


def _selector(obj: dict[str, Any]) -> str:
    spec = obj.get("spec") or {}
    labels = (spec.get("selector") or {}).get("matchLabels") if obj["kind"] != "Service" else spec.get("selector")
    return ",".join(f"{k}={v}" for k, v in (labels or {}).items())


def _ready_pods(kube: Kube, live: dict[str, Any]) -> int:
    """The workload's pods whose Ready condition is True now. kwok marks every bound pod Ready at once and the
    rehearsal's kubelet turns the ones it runs back to not ready a moment later (tools/rehearsal/kubelet.py); a
    controller's status can still count kwok's word for that moment, so the pods themselves are asked too."""
    labels = ((live.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    if not labels:
        return 0
    pods = kube.list(
        "v1", "Pod", live["metadata"]["namespace"], selector=",".join(f"{k}={v}" for k, v in labels.items())
    )
    return sum(1 for pod in pods if not pod["metadata"].get("deletionTimestamp") and is_ready(pod))


def _ready(kube: Kube, kind: str, live: dict[str, Any]) -> tuple[bool, str]:
    spec, status = live.get("spec") or {}, live.get("status") or {}
    match kind:
        case "Deployment" | "StatefulSet":
            want = spec.get("replicas", 1)
            have = status.get("availableReplicas" if kind == "Deployment" else "readyReplicas", 0)
            have = min(have, _ready_pods(kube, live)) if want else have
            updated = status.get("updatedReplicas", 0)
            return have >= want and updated >= want, f"{have}/{want} replicas available"
        case "DaemonSet":
            want = status.get("desiredNumberScheduled", 0)
            have = min(status.get("numberReady", 0), _ready_pods(kube, live))
            return status.get("observedGeneration", 0) >= live["metadata"].get("generation", 1) and have >= want, (
                f"{have}/{want} pods ready"
            )
        case "Job":
            done = any(c.get("type") == "Complete" and c.get("status") == "True" for c in status.get("conditions", []))
            return (
                done,
                "complete" if done else f"{status.get('succeeded', 0)} succeeded, {status.get('failed', 0)} failed",
            )
        case "Pod":
            ready = is_ready(live)
            return ready, f"phase {status.get('phase', 'Pending')}"
        case "PersistentVolumeClaim":
            phase = status.get("phase", "Pending")
            if _binding_mode(kube, spec.get("storageClassName")) == "WaitForFirstConsumer":
                return phase == "Pending", f"phase {phase} (WaitForFirstConsumer: bound when a pod uses it)"
            return phase == "Bound", f"phase {phase}"
        case "Secret":  # a token Secret (awaited): its data, however little of it
            return bool(live.get("data")), "data filled by the token controller" if live.get("data") else "no data yet"
        case "Service":
            if spec.get("type") == "LoadBalancer" and not (status.get("loadBalancer") or {}).get("ingress"):
                return False, "no load balancer ingress"
            if not waits_for_endpoints(live):
                return True, "ready"
            return _endpoints_ready(kube, live)
    return True, "ready"
