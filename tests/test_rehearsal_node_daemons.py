"""The pods a real node runs besides the models take their room on the rehearsal's kwok nodes: the model cache's
workers and FUSE daemons (made by the Fluid stand-in as Fluid v1.0.8's AlluxioRuntime controller makes them), and
every DaemonSet (the rehearsal's kube-controller-manager creates its pods; tests/test_rehearsal_runs.py shows them
bound). Without binaries."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.harness import plan_for
from tools.rehearsal import daemons, fluid
from tools.rehearsal.references import Blocked

GPU_TAINT = {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Equal", "value": "present"}


def _cache_objects() -> tuple[dict[str, Any], dict[str, Any]]:
    """dev's AlluxioRuntime and Dataset (tests/fixtures/environments/Pulumi.dev.yaml: the cache on use1)."""
    objects = {
        r.inputs["kind"]: r.inputs
        for r in plan_for("dev").kubernetes_objects()
        if r.inputs["kind"] in ("AlluxioRuntime", "Dataset") and r.inputs["metadata"]["namespace"] == "model-cache"
    }
    return objects["AlluxioRuntime"], objects["Dataset"]


@pytest.mark.plan
def test_the_cache_takes_its_room_as_fluids_controller_places_it():
    runtime, dataset = _cache_objects()
    master, worker, fuse = fluid.runtime_workloads(runtime, dataset)
    assert [(o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]) for o in (master, worker, fuse)] == [
        ("StatefulSet", "model-cache", "models-master"),
        ("StatefulSet", "model-cache", "models-worker"),
        ("DaemonSet", "model-cache", "models-fuse"),
    ]
    # The worker: `replicas` of them (dev: 1), with the worker's and job worker's requests, one per node (exclusive
    # placement: fluid@v1.0.8 pkg/ctrl/affinity.go L77-L92), on the Dataset's required node affinity (the l40s pool,
    # dev's cache worker pool) and tolerating the Dataset's tolerations (the GPU taint).
    assert worker["spec"]["replicas"] == 1
    pod = worker["spec"]["template"]["spec"]
    assert [(c["name"], c["resources"]["requests"]) for c in pod["containers"]] == [
        ("alluxio-worker", {"cpu": "500m", "memory": "20Gi"}),
        ("alluxio-job-worker", {"cpu": "100m", "memory": "2Gi"}),
    ]
    assert pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "inference-platform.io/pool", "operator": "In", "values": ["l40s"]}]}
        ]
    }
    anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert anti == [
        {
            "labelSelector": {"matchExpressions": [{"key": "fluid.io/dataset", "operator": "Exists"}]},
            "topologyKey": "kubernetes.io/hostname",
        }
    ]
    assert pod["tolerations"] == [GPU_TAINT]
    # FUSE: on the nodes the CSI plugin labels for this runtime, critical, tolerating every taint, its requests.
    fuse_pod = fuse["spec"]["template"]["spec"]
    assert fuse_pod["nodeSelector"] == {"fluid.io/f-model-cache-models": "true"}
    assert fuse_pod["priorityClassName"] == "system-node-critical"
    assert fuse_pod["tolerations"] == [{"operator": "Exists"}]
    assert fuse_pod["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "2Gi"}
    # The master on the system pool (the runtime's master.nodeSelector).
    assert master["spec"]["template"]["spec"]["nodeSelector"] == {"inference-platform.io/pool": "system"}


@pytest.mark.plan
def test_a_memory_tier_larger_than_the_workers_memory_request_becomes_its_request():
    """fluid@v1.0.8 pkg/ddc/alluxio/transform_resources.go L92-L123."""
    runtime, dataset = _cache_objects()
    runtime = yaml.safe_load(yaml.safe_dump(runtime))
    runtime["spec"]["tieredstore"]["levels"][0]["quota"] = "24Gi"  # the MEM level; the request is 20Gi
    _, worker, _ = fluid.runtime_workloads(runtime, dataset)
    requests = worker["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert requests == {"cpu": "500m", "memory": str(24 * 2**30)}


VOLUME = {
    "metadata": {"name": "model-cache-models"},
    "spec": {
        "csi": {
            "driver": "fuse.csi.fluid.io",
            "volumeAttributes": {"runtime_namespace": "model-cache", "runtime_name": "models"},
        }
    },
}


def _model_pod(node: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "llama-3-1-8b-predictor-1", "namespace": "inference", "uid": "p1"},
        "spec": {
            "nodeName": node,
            "volumes": [{"name": "kserve-pvc-source", "persistentVolumeClaim": {"claimName": "models"}}],
        },
    }


def test_a_model_server_starts_only_once_the_fuse_pod_of_its_node_is_ready():
    """Fluid's CSI plugin fails NodePublishVolume until the FUSE mount is up (nodeserver.go L142-L160)."""
    claims = {("inference", "models"): ("model-cache", "models")}
    assert fluid.fluid_volume_runtime(VOLUME) == ("model-cache", "models")
    blocked = fluid.fuse_blocker(_model_pod("l40s-0"), claims, {("model-cache", "models", "l40s-1")})
    assert blocked == Blocked(
        None,
        False,
        "ContainerCreating",
        'MountVolume.SetUp failed for volume "kserve-pvc-source" : rpc error: code = Internal desc = timeout '
        "waiting for FUSE mount point to be ready",
        "the FUSE pod of model-cache/models on l40s-0",
    )
    assert fluid.fuse_blocker(_model_pod("l40s-0"), claims, {("model-cache", "models", "l40s-0")}) is None
    assert fluid.fuse_blocker(_model_pod("l40s-0"), {}, set()) is None  # no Fluid volume: nothing to wait for


class Cluster:
    def __init__(self, objects: dict[str, list[dict[str, Any]]]):
        self.objects = objects
        self.applied: list[dict[str, Any]] = []

    def list(self, api_version, kind, namespace=None, *, selector=None):
        return self.objects.get(kind, [])

    def apply(self, obj, *, field_manager, force=False):
        self.applied.append(obj)
        node = next(n for n in self.objects["Node"] if n["metadata"]["name"] == obj["metadata"]["name"])
        node["metadata"].setdefault("labels", {}).update(obj["metadata"]["labels"])
        return node


def test_a_node_where_a_pod_mounts_the_cache_is_labelled_for_its_fuse():
    """NodeStageVolume (fluid@v1.0.8 pkg/csi/plugins/nodeserver.go L336-L366) labels the node; the FUSE DaemonSet
    selects it."""
    cluster = Cluster(
        {
            "PersistentVolume": [VOLUME],
            "PersistentVolumeClaim": [
                {"metadata": {"name": "models", "namespace": "inference"}, "spec": {"volumeName": "model-cache-models"}}
            ],
            "Pod": [_model_pod("l40s-0")],
            "Node": [{"metadata": {"name": "l40s-0"}}, {"metadata": {"name": "l40s-1"}}],
        }
    )
    stand_in = fluid.FluidStandIn(cluster, "dev-use1", "/runtime-mnt")  # type: ignore[arg-type]
    stand_in._stage()
    assert cluster.applied == [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "l40s-0", "labels": {"fluid.io/f-model-cache-models": "true"}},
        }
    ]
    stand_in._stage()
    assert len(cluster.applied) == 1  # labelled once


def test_a_daemonset_counts_as_placed_only_when_every_pod_it_wants_is_bound_and_ready():
    def daemon_set(desired: int, scheduled: int, ready: int) -> dict[str, Any]:
        return {
            "kind": "DaemonSet",
            "metadata": {"name": "models-fuse", "namespace": "model-cache", "generation": 1},
            "status": {
                "observedGeneration": 1,
                "desiredNumberScheduled": desired,
                "currentNumberScheduled": scheduled,
                "numberReady": ready,
            },
        }

    assert daemons.daemon_state(daemon_set(2, 2, 2)) == (True, "model-cache/models-fuse 2/2")
    assert daemons.daemon_state(daemon_set(2, 2, 1)) == (False, "model-cache/models-fuse 1/2")
    assert daemons.daemon_state(daemon_set(2, 1, 1)) == (False, "model-cache/models-fuse 1/2")
