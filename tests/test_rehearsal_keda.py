"""The rehearsal's KEDA stand-in scales a model at zero as KEDA v2.20.2 does at bring-up (catalog fact
`keda-scales-an-idle-target-to-zero-at-once`): at its first poll with no load, once the scheduler has placed the
first pod; and the scheduled check takes a model at zero by where that pod was placed."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tools.rehearsal import keda
from tools.rehearsal.kube import ApiError

NAMESPACE = "inference"
PROMETHEUS = {"type": "prometheus", "metadata": {"query": "sum(vllm:num_requests_waiting)", "threshold": "4"}}
CPU = {"type": "cpu", "metadata": {"value": "80"}}
TARGET = "qwen-engine"  # not the ScaledObject's name: the stand-in follows scaleTargetRef
SELECTOR = {"app": "isvc.qwen-engine"}
MODEL_LABELS = {"serving.kserve.io/inferenceservice": "qwen", **SELECTOR}


def scaled_object(
    *, minimum: int = 0, annotations: dict[str, str] | None = None, namespace: str = NAMESPACE, **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "qwen", "namespace": namespace, "annotations": annotations or {}},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": TARGET},
            "minReplicaCount": minimum,
            "maxReplicaCount": 1,
            "triggers": [PROMETHEUS],
            **spec,
        },
    }


IDLE = ("apps/v1", "Deployment", TARGET)


@pytest.mark.parametrize(
    ("obj", "target"),
    [
        pytest.param(scaled_object(), IDLE, id="at zero"),
        pytest.param(scaled_object(minimum=1), None, id="min 1"),
        pytest.param(scaled_object(idleReplicaCount=0), None, id="idle count"),  # our plans set none
        pytest.param(scaled_object(annotations={"autoscaling.keda.sh/paused": "true"}), None, id="paused"),
        pytest.param(scaled_object(annotations={"autoscaling.keda.sh/paused": "false"}), IDLE, id="paused false"),
        # not a bool: KEDA takes it as true
        pytest.param(scaled_object(annotations={"autoscaling.keda.sh/paused": "yes"}), None, id="paused not a bool"),
        pytest.param(scaled_object(annotations={"autoscaling.keda.sh/paused-replicas": "0"}), None, id="paused at"),
        pytest.param(scaled_object(annotations={"autoscaling.keda.sh/paused-scale-in": "1"}), None, id="no scale-in"),
        pytest.param(scaled_object(annotations={"autoscaling.keda.sh/force-activation": "t"}), None, id="forced"),
        pytest.param(scaled_object(triggers=[CPU]), None, id="cpu only: always active"),
        pytest.param(scaled_object(triggers=[CPU, PROMETHEUS]), IDLE, id="cpu and prometheus"),
    ],
)
def test_which_targets_keda_scales_to_zero_while_idle(obj, target):
    assert keda.idle_target(obj) == target


@pytest.mark.parametrize(
    ("value", "namespaces"),
    [(None, None), ("", None), ('""', None), ("inference", {"inference"}), ("inference,batch", {"inference", "batch"})],
)
def test_the_operator_watches_the_namespaces_its_release_names(value, namespaces):
    assert keda.watched_namespaces(value) == namespaces


class ScalingKube:
    """The ScaledObject's Deployment and its pods; what was scaled."""

    def __init__(self, *, replicas: int, nodes: list[str | None], scale_error: int | None = None, selector=SELECTOR):
        self.deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": TARGET, "namespace": NAMESPACE},
            "spec": {"replicas": replicas, "selector": {"matchLabels": selector}},
        }
        self.pods = [
            {
                "metadata": {"name": f"qwen-{i}", "namespace": NAMESPACE, "labels": MODEL_LABELS},
                "spec": {"nodeName": node} if node else {},
            }
            for i, node in enumerate(nodes)
        ]
        self.scale_error = scale_error
        self.scaled: list[tuple[str, int, str]] = []
        self.scaled_objects = [scaled_object()]
        self.asked: list[str | None] = []  # the namespaces a target was looked up in

    def list(self, api_version, kind, namespace=None, *, selector=None):
        if kind == "ScaledObject":
            return self.scaled_objects
        assert (kind, namespace, selector) == ("Pod", NAMESPACE, "app=isvc.qwen-engine")
        return self.pods

    def get(self, api_version, kind, name, namespace=None):
        self.asked.append(namespace)
        assert (kind, name) == ("Deployment", TARGET)
        return self.deployment if namespace == NAMESPACE else None

    def scale(self, api_version, kind, namespace, name, replicas, *, field_manager):
        if self.scale_error:
            raise ApiError(self.scale_error, "Conflict", "changed")
        self.scaled.append((name, replicas, field_manager))
        self.deployment["spec"]["replicas"] = replicas


def _stand_in(kube: ScalingKube, watch_namespace: str | None = "inference") -> keda.KedaStandIn:
    return keda.KedaStandIn(kube, "dev-use1", watch_namespace)  # type: ignore[arg-type]


def test_a_target_at_zero_is_scaled_to_zero_once_its_pods_are_placed():
    kube = ScalingKube(replicas=1, nodes=["a100-mig-0"])
    stand_in = _stand_in(kube)
    stand_in.reconcile()
    assert kube.scaled == [(TARGET, 0, keda.MANAGER)]
    assert stand_in.scaled == {f"{NAMESPACE}/{TARGET}": [("a100-mig-0", MODEL_LABELS)]}
    stand_in.reconcile()  # at zero: nothing more to do
    assert len(kube.scaled) == 1


@pytest.mark.parametrize("nodes", [[None], [], ["a100-mig-0", None]], ids=["pending", "no pod yet", "one pending"])
def test_a_target_whose_pods_are_not_all_placed_is_left_to_the_scheduler(nodes):
    kube = ScalingKube(replicas=len(nodes) or 1, nodes=nodes)
    stand_in = _stand_in(kube)
    stand_in.reconcile()
    assert kube.scaled == [] and stand_in.scaled == {}


def test_a_pod_going_away_is_not_one_to_wait_for():
    """A pod being deleted (a rollout's old one) is not the target's: only its placed pods count."""
    kube = ScalingKube(replicas=1, nodes=["a100-mig-0", None])
    kube.pods[1]["metadata"]["deletionTimestamp"] = "2026-12-04T08:00:00Z"
    stand_in = _stand_in(kube)
    stand_in.reconcile()
    assert stand_in.scaled == {f"{NAMESPACE}/{TARGET}": [("a100-mig-0", MODEL_LABELS)]}


def test_a_target_that_selects_nothing_by_label_is_left_alone():
    kube = ScalingKube(replicas=1, nodes=["a100-mig-0"], selector={})
    stand_in = _stand_in(kube)
    stand_in.reconcile()
    assert kube.scaled == []


def test_a_scaled_object_outside_the_watched_namespaces_is_not_the_operators():
    kube = ScalingKube(replicas=1, nodes=["a100-mig-0"])
    kube.scaled_objects = [scaled_object(namespace="batch")]
    _stand_in(kube).reconcile()
    assert kube.asked == [] and kube.scaled == []
    _stand_in(kube, watch_namespace="").reconcile()  # "": every namespace
    assert kube.asked == ["batch"]


def test_a_scale_that_conflicts_is_tried_again_at_the_next_round():
    kube = ScalingKube(replicas=1, nodes=["a100-mig-0"], scale_error=409)
    stand_in = _stand_in(kube)
    stand_in.reconcile()
    assert stand_in.scaled == {}
    kube.scale_error = None
    stand_in.reconcile()
    assert stand_in.scaled == {f"{NAMESPACE}/{TARGET}": [("a100-mig-0", MODEL_LABELS)]}


def test_the_keda_release_starts_the_stand_in_on_its_cluster_with_its_watched_namespaces():
    """The keda chart has no source the rehearsal renders (releases.py's no-source path), so its release starts
    the stand-in as cert-manager's starts that one (runner.Rehearsal.start_controllers)."""
    from tools.rehearsal import runner

    target = SimpleNamespace(name="dev-use1", kube=ScalingKube(replicas=0, nodes=[]), controllers=[])
    limits: list[Any] = []
    run = SimpleNamespace(
        r=SimpleNamespace(limit=limits.append), _limit=lambda resource, category, obj, reason, stands_in: obj
    )
    resource = SimpleNamespace(inputs={"chart": "keda", "version": "2.20.2", "values": {"watchNamespace": "inference"}})
    rehearsal = object.__new__(runner.Rehearsal)
    rehearsal.start_controllers(run, target, resource, None)  # type: ignore[arg-type]
    try:
        (stand_in,) = target.controllers
        assert isinstance(stand_in, keda.KedaStandIn) and stand_in.namespaces == {"inference"}
        assert limits == ["KEDA's operator and the Prometheus its triggers read"]
    finally:
        for controller in target.controllers:
            controller.stop()


class ModelKube:
    """A model at zero after the stand-in scaled it: its InferenceService and ScaledObject, no pod, two nodes."""

    def get(self, api_version, kind, name, namespace=None):
        if kind == "ScaledObject":
            return scaled_object()
        return {"kind": kind, "metadata": {"name": name, "namespace": namespace}}

    def list(self, api_version, kind, namespace=None, *, selector=None):
        if kind == "Node":
            return [
                {"metadata": {"name": "a100-mig-0", "labels": {"inference-platform.io/pool": "a100-mig"}}},
                {"metadata": {"name": "l40s-0", "labels": {"inference-platform.io/pool": "l40s"}}},
            ]
        return []  # its pods are gone


@pytest.mark.parametrize(
    ("node", "labels", "ok", "detail"),
    [
        (
            "a100-mig-0",
            MODEL_LABELS,
            True,
            "at zero (minReplicas 0): its first pod(s) bound to a100-mig-0 (pool a100-mig), then KEDA scaled it to zero",
        ),
        (
            "l40s-0",
            MODEL_LABELS,
            False,
            "at zero (minReplicas 0): its first pod(s) bound to l40s-0 (pool l40s), then KEDA scaled it to zero; "
            "not pool a100-mig",
        ),
        # pods of another model (its ScaledObject naming another's target): none of this model's was seen
        ("a100-mig-0", {"serving.kserve.io/inferenceservice": "llama", **SELECTOR}, False, None),
    ],
)
def test_a_model_at_zero_is_judged_by_where_its_first_pod_was_placed(monkeypatch, node, labels, ok, detail):
    from tools.rehearsal import serving

    monkeypatch.setattr(serving, "SCHEDULE_SECONDS", 0.01)
    monkeypatch.setattr(serving.time, "sleep", lambda seconds: None)
    stand_in = keda.KedaStandIn(ModelKube(), "dev-use1")  # type: ignore[arg-type]
    stand_in.scaled[f"{NAMESPACE}/{TARGET}"] = [(node, labels)]
    target = SimpleNamespace(name="dev-use1", kube=ModelKube(), controllers=[stand_in])
    rehearsal = SimpleNamespace(sync=lambda target: None)
    wave = SimpleNamespace(name="environment")
    args = (rehearsal, target, "InferenceService", "qwen", {"a100-mig"}, "inference-platform.io", wave, "dev", "qwen")
    check = serving._schedule(*args, at_zero=True)  # type: ignore[arg-type]
    assert check.ok is ok
    if detail is not None:
        assert check.detail == detail
    # Not at zero, or no KEDA: a model without pods has none to judge.
    assert serving._schedule(*args, at_zero=False).ok is False  # type: ignore[arg-type]
    target.controllers = []
    assert serving._schedule(*args, at_zero=True).ok is False  # type: ignore[arg-type]
