"""The rehearsal's KEDA stand-in scales a model at zero as KEDA v2.20.2 does at bring-up (catalog fact
`keda-scales-an-idle-target-to-zero-at-once`): at its first poll with no load, once the scheduler has placed the
first pod; and the scheduled check takes a model at zero by where that pod was placed."""

from __future__ import annotations

from typing import Any

import pytest

from tools.rehearsal import keda
from tools.rehearsal.kube import ApiError

NAMESPACE = "inference"


def scaled_object(*, minimum: int = 0, annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "qwen", "namespace": NAMESPACE, "annotations": annotations or {}},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "qwen-predictor"},
            "minReplicaCount": minimum,
            "maxReplicaCount": 1,
            **spec,
        },
    }


@pytest.mark.parametrize(
    ("obj", "target"),
    [
        (scaled_object(), ("apps/v1", "Deployment", "qwen-predictor")),
        (scaled_object(minimum=1), None),
        (scaled_object(idleReplicaCount=0), None),  # KEDA scales it to the idle count, and our plans set none
        (scaled_object(annotations={"autoscaling.keda.sh/paused": "true"}), None),
        (
            scaled_object(annotations={"autoscaling.keda.sh/paused": "false"}),
            ("apps/v1", "Deployment", "qwen-predictor"),
        ),
        (scaled_object(annotations={"autoscaling.keda.sh/paused": "yes"}), None),  # not a bool: KEDA takes it as true
        (scaled_object(annotations={"autoscaling.keda.sh/paused-replicas": "0"}), None),
        (scaled_object(annotations={"autoscaling.keda.sh/paused-scale-in": "1"}), None),
        (scaled_object(annotations={"autoscaling.keda.sh/force-activation": "true"}), None),
    ],
    ids=[
        "at zero",
        "min 1",
        "idle count",
        "paused",
        "paused false",
        "paused not a bool",
        "paused replicas",
        "paused scale-in",
        "forced active",
    ],
)
def test_which_targets_keda_scales_to_zero_while_idle(obj, target):
    assert keda.idle_target(obj) == target


class ScalingKube:
    """The ScaledObject's Deployment and its pods; what was scaled."""

    def __init__(self, *, replicas: int, nodes: list[str | None], scale_error: int | None = None):
        self.deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "qwen-predictor", "namespace": NAMESPACE},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "isvc.qwen-predictor"}}},
        }
        self.pods = [
            {"metadata": {"name": f"qwen-{i}", "namespace": NAMESPACE}, "spec": {"nodeName": node} if node else {}}
            for i, node in enumerate(nodes)
        ]
        self.scale_error = scale_error
        self.scaled: list[tuple[str, int, str]] = []

    def list(self, api_version, kind, namespace=None, *, selector=None):
        if kind == "ScaledObject":
            return [scaled_object()]
        assert (kind, namespace, selector) == ("Pod", NAMESPACE, "app=isvc.qwen-predictor")
        return self.pods

    def get(self, api_version, kind, name, namespace=None):
        assert (kind, name, namespace) == ("Deployment", "qwen-predictor", NAMESPACE)
        return self.deployment

    def scale(self, api_version, kind, namespace, name, replicas, *, field_manager):
        if self.scale_error:
            raise ApiError(self.scale_error, "Conflict", "changed")
        self.scaled.append((name, replicas, field_manager))
        self.deployment["spec"]["replicas"] = replicas


def test_a_target_at_zero_is_scaled_to_zero_once_its_pods_are_placed():
    kube = ScalingKube(replicas=1, nodes=["a100-mig-0"])
    stand_in = keda.KedaStandIn(kube, "dev-use1")  # type: ignore[arg-type]
    stand_in.reconcile()
    assert kube.scaled == [("qwen-predictor", 0, keda.MANAGER)]
    assert stand_in.scaled == {f"{NAMESPACE}/qwen-predictor": ["a100-mig-0"]}
    stand_in.reconcile()  # at zero: nothing more to do
    assert len(kube.scaled) == 1


@pytest.mark.parametrize("nodes", [[None], [], ["a100-mig-0", None]], ids=["pending", "no pod yet", "one pending"])
def test_a_target_whose_pods_are_not_all_placed_is_left_to_the_scheduler(nodes):
    kube = ScalingKube(replicas=len(nodes) or 1, nodes=nodes)
    stand_in = keda.KedaStandIn(kube, "dev-use1")  # type: ignore[arg-type]
    stand_in.reconcile()
    assert kube.scaled == [] and stand_in.scaled == {}


def test_a_scale_that_conflicts_is_tried_again_at_the_next_round():
    kube = ScalingKube(replicas=1, nodes=["a100-mig-0"], scale_error=409)
    stand_in = keda.KedaStandIn(kube, "dev-use1")  # type: ignore[arg-type]
    stand_in.reconcile()
    assert stand_in.scaled == {}
    kube.scale_error = None
    stand_in.reconcile()
    assert stand_in.scaled == {f"{NAMESPACE}/qwen-predictor": ["a100-mig-0"]}


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
    ("node", "ok", "detail"),
    [
        (
            "a100-mig-0",
            True,
            "at zero (minReplicas 0): its first pod(s) bound to a100-mig-0 (pool a100-mig), then KEDA scaled it to zero",
        ),
        (
            "l40s-0",
            False,
            "at zero (minReplicas 0): its first pod(s) bound to l40s-0 (pool l40s), then KEDA scaled it to zero; "
            "not pool a100-mig",
        ),
    ],
)
def test_a_model_at_zero_is_judged_by_where_its_first_pod_was_placed(monkeypatch, node, ok, detail):
    from types import SimpleNamespace

    from tools.rehearsal import serving

    stand_in = keda.KedaStandIn(ModelKube(), "dev-use1")  # type: ignore[arg-type]
    stand_in.scaled[f"{NAMESPACE}/qwen-predictor"] = [node]
    target = SimpleNamespace(name="dev-use1", kube=ModelKube(), controllers=[stand_in])
    rehearsal = SimpleNamespace(sync=lambda target: None)
    wave = SimpleNamespace(name="environment")
    args = (rehearsal, target, "InferenceService", "qwen", {"a100-mig"}, "inference-platform.io", wave, "dev", "qwen")
    check = serving._schedule(*args, at_zero=True)  # type: ignore[arg-type]
    assert (check.ok, check.detail) == (ok, detail)
    # Not at zero, or no KEDA: a model without pods has none to judge (after the check's wait).
    monkeypatch.setattr(serving, "SCHEDULE_SECONDS", 0.01)
    monkeypatch.setattr(serving.time, "sleep", lambda seconds: None)
    assert serving._schedule(*args, at_zero=False).ok is False  # type: ignore[arg-type]
    target.controllers = []
    assert serving._schedule(*args, at_zero=True).ok is False  # type: ignore[arg-type]
