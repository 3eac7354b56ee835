"""Live objects as a cluster holds them after a release's install, and whether Helm v3.20.2's wait takes the first of
each case as ready: written by hand from pkg/kube/ready.go (catalog fact `helm-wait-readiness`), each rule with a
passing and a failing near-variant. tests/test_rehearsal_helm_wait.py judges them with the rehearsal's
tools/rehearsal/helm_wait.py and, in `make rehearsal-test`, with Helm's own ReadyChecker (the `helm-readycheck`
program built at the pin), so the expectations below are Helm's, not the rehearsal's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NAMESPACE = "release"
UID = "5f0c7a2e-0000-4000-8000-000000000001"
LABELS = {"app": "web"}


@dataclass(frozen=True)
class Case:
    name: str
    objects: list[dict[str, Any]]  # the first is the release's object judged; the rest what it reads
    ready: bool  # Helm's judgement, by hand
    wait_for_jobs: bool = False
    # Where the rehearsal judges otherwise on purpose, why (Helm's own checker is then expected to say `ready`).
    rehearsal_differs: str = ""
    notes: list[str] = field(default_factory=list)


def _meta(name: str, *, generation: int = 1, labels: dict[str, str] | None = None, **more: Any) -> dict[str, Any]:
    return {"name": name, "namespace": NAMESPACE, "generation": generation, "labels": labels or {}, **more}


def _template() -> dict[str, Any]:
    return {
        "metadata": {"labels": LABELS},
        "spec": {"containers": [{"name": "web", "image": "registry.k8s.io/pause:3.10"}]},
    }


def pod(name: str, *, ready: bool, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta(name, labels=labels or {**LABELS, "pod-template-hash": "abc"}),
        "spec": {"containers": [{"name": "web", "image": "registry.k8s.io/pause:3.10"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def _pods(ready: int, total: int, labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
    return [pod(f"web-{i}", ready=i < ready, labels=labels) for i in range(total)]


def deployment(
    *,
    replicas: int,
    ready: int,
    strategy: dict[str, Any] | None = None,
    paused: bool = False,
    observed: int = 1,
    same_template: bool = True,
    pods_ready: int | None = None,
    status_ready: int | None = None,
    rs_observed: int = 2,
    owner: dict[str, Any] | None = None,
    older_twin: bool = False,
) -> list[dict[str, Any]]:
    """A Deployment (its status counting `status_ready`, else `ready`), the ReplicaSet `owner` controls (the
    Deployment, by default; its template, or another one's; generation 2, observed `rs_observed`) with `ready`
    counted ready, and its pods; `older_twin`: an older ReplicaSet of the same template, none of its pods ready."""
    template = _template()
    rs_template = {
        "metadata": {"labels": {**LABELS, "pod-template-hash": "abc"}},
        "spec": {"containers": [{"name": "web", "image": "registry.k8s.io/pause:3.10" if same_template else "old"}]},
    }
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta("web", uid=UID),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": LABELS},
            "template": template,
            "strategy": strategy
            or {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "paused": paused,
        },
        "status": {
            "observedGeneration": observed,
            "replicas": replicas,
            "readyReplicas": ready if status_ready is None else status_ready,
        },
    }
    controller = owner or {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": UID, "controller": True}
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": _meta(
            "web-abc",
            generation=2,
            labels={**LABELS, "pod-template-hash": "abc"},
            creationTimestamp="2026-12-04T07:00:00Z",
            ownerReferences=[controller],
        ),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {**LABELS, "pod-template-hash": "abc"}},
            "template": rs_template,
        },
        "status": {"observedGeneration": rs_observed, "replicas": replicas, "readyReplicas": ready},
    }
    twins = []
    if older_twin:
        twin_labels = {**LABELS, "pod-template-hash": "old"}
        twin_template = {**rs_template, "metadata": {"labels": twin_labels}}
        twin_meta = {
            **rs["metadata"],
            "name": "web-old",
            "labels": twin_labels,
            "creationTimestamp": "2026-12-04T06:00:00Z",
        }
        twin_spec = {**rs["spec"], "selector": {"matchLabels": twin_labels}, "template": twin_template}
        twins.append({**rs, "metadata": twin_meta, "spec": twin_spec, "status": {**rs["status"], "readyReplicas": 0}})
    return [dep, rs, *twins, *_pods(ready if pods_ready is None else pods_ready, replicas)]


def daemon_set(
    *,
    desired: int,
    ready: int,
    updated: int | None = None,
    strategy: dict[str, Any] | None = None,
    observed: int = 1,
    pods_ready: int | None = None,
    selector: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": _meta("agent"),
        "spec": {
            "selector": selector or {"matchLabels": LABELS},
            "template": _template(),
            "updateStrategy": strategy
            or {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
        },
        "status": {
            "observedGeneration": observed,
            "desiredNumberScheduled": desired,
            "currentNumberScheduled": desired,
            "updatedNumberScheduled": desired if updated is None else updated,
            "numberReady": ready,
            "numberMisscheduled": 0,
        },
    }
    return [ds, *_pods(ready if pods_ready is None else pods_ready, desired, LABELS)]


def stateful_set(
    *,
    replicas: int,
    ready: int,
    updated: int | None = None,
    partition: int = 0,
    revisions: tuple[str, str] = ("r1", "r1"),
    strategy_type: str = "RollingUpdate",
    pods: tuple[int, int] | None = None,
) -> list[dict[str, Any]]:
    """`pods`: (ready, total) pods when they are not `ready` of `replicas`."""
    strategy: dict[str, Any] = {"type": strategy_type}
    if strategy_type == "RollingUpdate":
        strategy["rollingUpdate"] = {"partition": partition}
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": _meta("db"),
        "spec": {
            "replicas": replicas,
            "serviceName": "db",
            "selector": {"matchLabels": LABELS},
            "template": _template(),
            "updateStrategy": strategy,
        },
        "status": {
            "observedGeneration": 1,
            "replicas": replicas,
            "readyReplicas": ready,
            "updatedReplicas": replicas if updated is None else updated,
            "currentRevision": revisions[0],
            "updateRevision": revisions[1],
        },
    }
    return [sts, *_pods(*(pods or (ready, replicas)), LABELS)]


def service(spec: dict[str, Any], status: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [{"apiVersion": "v1", "kind": "Service", "metadata": _meta("web"), "spec": spec, "status": status or {}}]


def job(*, completions: int | None, succeeded: int, failed: int = 0) -> list[dict[str, Any]]:
    """A Job of `completions`; without, a work queue of two pods at once (the API server defaults completions to 1
    only when parallelism is unset too)."""
    spec: dict[str, Any] = {
        "backoffLimit": 6,
        "template": {**_template(), "spec": {**_template()["spec"], "restartPolicy": "Never"}},
    }
    if completions is not None:
        spec["completions"] = completions
    else:
        spec["parallelism"] = 2
    return [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": _meta("migrate"),
            "spec": spec,
            "status": {"succeeded": succeeded, "failed": failed},
        }
    ]


def claim(phase: str) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": _meta("data"),
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": phase},
        }
    ]


def replica_set(
    *, ready: int, total: int, observed: int = 1, selector: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": _meta("web-abc", labels=LABELS),
        "spec": {"replicas": total, "selector": selector or {"matchLabels": LABELS}, "template": _template()},
        "status": {"observedGeneration": observed, "replicas": total, "readyReplicas": ready},
    }
    return [rs, *_pods(ready, total, LABELS)]


def replication_controller(*, ready: int, total: int) -> list[dict[str, Any]]:
    rc = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": _meta("legacy"),
        "spec": {"replicas": total, "selector": LABELS, "template": _template()},
        "status": {"observedGeneration": 1, "replicas": total, "readyReplicas": ready},
    }
    return [rc, *_pods(ready, total, LABELS)]


BY_EXPRESSION = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}
ROLLING_0_0 = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "0%", "maxUnavailable": "0%"}}
CASES = [
    # Deployment: the new ReplicaSet's ready replicas reach replicas - maxUnavailable (25 % of 4 rounds down to 1).
    Case("deployment of 4 at the default 25 %: 3 ready pass", deployment(replicas=4, ready=3), True),
    Case("deployment of 4 at the default 25 %: 2 ready fail", deployment(replicas=4, ready=2), False),
    Case("deployment of 1: 25 % rounds down to 0, so its one pod", deployment(replicas=1, ready=0), False),
    Case("deployment of 2: 25 % rounds down to 0, both pods", deployment(replicas=2, ready=1), False),
    Case(
        "deployment of 4, Recreate: every pod",
        deployment(replicas=4, ready=3, strategy={"type": "Recreate"}),
        False,
    ),
    Case(
        "deployment of 1, 0 % and 0 %: maxUnavailable becomes 1",
        deployment(replicas=1, ready=0, strategy=ROLLING_0_0),
        True,
    ),
    Case(
        "deployment of 4, maxUnavailable 2: 2 ready pass",
        deployment(
            replicas=4,
            ready=2,
            strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 2}},
        ),
        True,
    ),
    Case("deployment paused: ready whatever its pods", deployment(replicas=2, ready=0, paused=True), True),
    Case(
        "deployment without a ReplicaSet of its template", deployment(replicas=1, ready=1, same_template=False), False
    ),
    Case("deployment whose generation is not observed yet", deployment(replicas=1, ready=1, observed=0), False),
    Case(
        "deployment whose ReplicaSet counts a pod that is not Ready",
        deployment(replicas=1, ready=1, pods_ready=0),
        True,
        rehearsal_differs="kwok marks a pod Ready before the rehearsal's kubelet takes it back: the rehearsal asks "
        "the pods too",
    ),
    Case(
        "deployment counting none ready, its new ReplicaSet 3: Helm reads the ReplicaSet",
        deployment(replicas=4, ready=3, status_ready=0),
        True,
    ),
    Case(
        "deployment whose ReplicaSet's generation is not observed yet",
        deployment(replicas=1, ready=1, rs_observed=1),
        False,
    ),
    Case(
        "deployment with an older ReplicaSet of its template: the older one is its new one",
        deployment(replicas=1, ready=1, older_twin=True),
        False,
    ),
    Case(
        "deployment whose ReplicaSet it owns but does not control",
        deployment(
            replicas=1,
            ready=1,
            owner={"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": UID, "controller": False},
        ),
        False,
    ),
    Case(
        "deployment whose ReplicaSet another Deployment controls",
        deployment(
            replicas=1,
            ready=1,
            owner={
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": "api",
                "uid": UID[:-1] + "2",
                "controller": True,
            },
        ),
        False,
    ),
    # DaemonSet: generation observed; rolling: every desired pod updated, desired - maxUnavailable (rounded up) ready.
    Case("daemonset on 1 node at maxUnavailable 1: none ready pass", daemon_set(desired=1, ready=0), True),
    Case("daemonset on 3 nodes at maxUnavailable 1: 2 ready pass", daemon_set(desired=3, ready=2), True),
    Case("daemonset on 3 nodes at maxUnavailable 1: 1 ready fail", daemon_set(desired=3, ready=1), False),
    Case("daemonset with a pod not updated yet", daemon_set(desired=3, ready=3, updated=2), False),
    Case(
        "daemonset at 50 % of 3 (rounded up to 2): 1 ready pass",
        daemon_set(
            desired=3,
            ready=1,
            strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%", "maxSurge": 0}},
        ),
        True,
    ),
    Case(
        "daemonset at 50 % of 3: none ready fail",
        daemon_set(
            desired=3,
            ready=0,
            strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%", "maxSurge": 0}},
        ),
        False,
    ),
    Case("daemonset OnDelete: ready at once", daemon_set(desired=3, ready=0, strategy={"type": "OnDelete"}), True),
    Case("daemonset whose generation is not observed yet", daemon_set(desired=1, ready=1, observed=0), False),
    Case(
        "daemonset selected by an expression, all ready",
        daemon_set(desired=3, ready=3, selector=BY_EXPRESSION),
        True,
    ),
    Case(
        "daemonset counting 3 ready whose pods say 1",
        daemon_set(desired=3, ready=3, pods_ready=1),
        True,
        rehearsal_differs="its pods' own Ready (kwok's first word, taken back by the rehearsal's kubelet)",
    ),
    # StatefulSet: every replica ready, the partition's updated, current revision the update revision (partition 0).
    Case("statefulset of 3, all ready", stateful_set(replicas=3, ready=3), True),
    Case("statefulset of 3, 2 ready", stateful_set(replicas=3, ready=2), False),
    Case(
        "statefulset still rolling to a new revision", stateful_set(replicas=3, ready=3, revisions=("r1", "r2")), False
    ),
    Case(
        "statefulset with partition 1: its revisions may differ",
        stateful_set(replicas=3, ready=3, updated=2, partition=1, revisions=("r1", "r2")),
        True,
    ),
    Case(
        "statefulset with partition 1 and 1 updated", stateful_set(replicas=3, ready=3, updated=1, partition=1), False
    ),
    Case("statefulset OnDelete: ready at once", stateful_set(replicas=3, ready=0, strategy_type="OnDelete"), True),
    Case("statefulset counting more ready than its replicas", stateful_set(replicas=3, ready=4, pods=(4, 4)), False),
    Case(
        "statefulset counting 3 ready whose pods say 2",
        stateful_set(replicas=3, ready=3, pods=(2, 3)),
        True,
        rehearsal_differs="its pods' own Ready (kwok's first word, taken back by the rehearsal's kubelet)",
    ),
    # Service: a cluster IP; a LoadBalancer its ingress or an external IP.
    Case(
        "service with a cluster IP",
        service({"type": "ClusterIP", "clusterIP": "10.0.0.10", "ports": [{"port": 80}]}),
        True,
    ),
    Case("service without a cluster IP yet", service({"type": "ClusterIP", "ports": [{"port": 80}]}), False),
    Case(
        "load balancer without ingress",
        service({"type": "LoadBalancer", "clusterIP": "10.0.0.10", "ports": [{"port": 80}]}),
        False,
    ),
    Case(
        "load balancer with its ingress",
        service(
            {"type": "LoadBalancer", "clusterIP": "10.0.0.10", "ports": [{"port": 80}]},
            {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}},
        ),
        True,
    ),
    Case(
        "load balancer with an external IP",
        service(
            {"type": "LoadBalancer", "clusterIP": "10.0.0.10", "externalIPs": ["203.0.113.8"], "ports": [{"port": 80}]}
        ),
        True,
    ),
    Case("external name", service({"type": "ExternalName", "externalName": "example.com"}), True),
    Case(
        "load balancer with an empty ingress list (Go asks for nil)",
        service(
            {"type": "LoadBalancer", "clusterIP": "10.0.0.10", "ports": [{"port": 80}]},
            {"loadBalancer": {"ingress": []}},
        ),
        True,
    ),
    # Job: only with waitForJobs.
    Case("job running, without waitForJobs", job(completions=1, succeeded=0), True),
    Case("job running, with waitForJobs", job(completions=1, succeeded=0), False, wait_for_jobs=True),
    Case("job complete, with waitForJobs", job(completions=1, succeeded=1), True, wait_for_jobs=True),
    Case("job failed past its backoffLimit", job(completions=1, succeeded=0, failed=7), False, wait_for_jobs=True),
    Case("job without completions", job(completions=None, succeeded=0), True, wait_for_jobs=True),
    Case(
        "job failed as often as its backoffLimit",
        job(completions=None, succeeded=0, failed=6),
        True,
        wait_for_jobs=True,
    ),
    # PersistentVolumeClaim: Bound, whatever its class's binding mode.
    Case("claim pending", claim("Pending"), False),
    Case("claim bound", claim("Bound"), True),
    # Pod and ReplicaSet: Ready pods.
    Case("pod ready", [pod("web-0", ready=True)], True),
    Case("pod not ready", [pod("web-0", ready=False)], False),
    Case("replicaset with every pod ready", replica_set(ready=2, total=2), True),
    Case("replicaset with a pod not ready", replica_set(ready=1, total=2), False),
    Case("replicaset whose generation is not observed yet", replica_set(ready=2, total=2, observed=0), False),
    Case(
        "replicaset selected by an expression, a pod not ready",
        replica_set(ready=1, total=2, selector=BY_EXPRESSION),
        False,
    ),
    Case("replicationcontroller with every pod ready", replication_controller(ready=2, total=2), True),
    Case("replicationcontroller with a pod not ready", replication_controller(ready=1, total=2), False),
    # Any other kind: ready once created.
    Case("configmap", [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("settings"), "data": {}}], True),
]
