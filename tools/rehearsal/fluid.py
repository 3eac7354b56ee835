"""A stand-in for what Fluid's (v1.0.8) AlluxioRuntime controller hands the pods that read a Dataset: its
PersistentVolume and PersistentVolumeClaim. Fluid's controllers are not run (their images carry Helm and the
runtime charts they install from inside), so nothing else would make the claim a model server mounts, and its
pods would wait for it. The volume is made exactly as the controller makes it once the Dataset is bound
(fluid-cloudnative/fluid@v1.0.8:pkg/utils/dataset/volume/create.go L37-L259): named `<namespace>-<name>`, the
Dataset's access modes (ReadOnlyMany when none), 100Pi unless the Dataset's annotation says otherwise, CSI driver
fuse.csi.fluid.io, and a node affinity that is the runtime's `fuse.nodeSelector` (L109-L129): so the scheduler
places a model's pods only where the cache's FUSE can run, as in a cluster. It is reported as a stand-in."""

from __future__ import annotations

import threading
from typing import Any

from tools.rehearsal.kube import KindNotServed, Kube
from tools.rehearsal.processes import background_error

RUNTIMES = ("data.fluid.io/v1alpha1", "AlluxioRuntime")
DATASETS = ("data.fluid.io/v1alpha1", "Dataset")
MANAGER = "rehearsal-fluid-stand-in"
# fluid@v1.0.8: pkg/common/volume.go L30, L40; pkg/common/alluxio.go L23; pkg/utils/dataset.go L33-L34;
# pkg/common/constants.go L166-L170 (GetExpectedFluidAnnotations); pkg/common/label.go L27 (fluid.io/s-).
CSI_DRIVER = "fuse.csi.fluid.io"
STORAGE_CLASS = "fluid"
MOUNT_TYPE = "fuse.alluxio-fuse"
CAPACITY_ANNOTATION = "pvc.fluid.io/resources.requests.storage"
DEFAULT_CAPACITY = "100Pi"
ANNOTATIONS = {"CreatedBy": "fluid"}
MOUNT_ROOT_DEFAULT = "/runtime-mnt"  # charts/fluid/fluid/values.yaml runtime.mountRoot


def volume_objects(runtime: dict[str, Any], dataset: dict[str, Any], mount_root: str) -> list[dict[str, Any]]:
    """The PersistentVolume and claim the AlluxioRuntime controller creates for a bound Dataset."""
    namespace, name = runtime["metadata"]["namespace"], runtime["metadata"]["name"]
    pv_name = f"{namespace}-{name}"  # pkg/ddc/base/pv.go L21-L28
    access = (dataset.get("spec") or {}).get("accessModes") or ["ReadOnlyMany"]
    capacity = ((dataset["metadata"].get("annotations") or {}).get(CAPACITY_ANNOTATION)) or DEFAULT_CAPACITY
    labels = {f"fluid.io/s-{namespace}-{name}": "true", "fluid.io/dataset-id": f"{namespace}-{name}"}
    volume: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": pv_name, "labels": labels, "annotations": ANNOTATIONS},
        "spec": {
            "claimRef": {"namespace": namespace, "name": name},
            "accessModes": access,
            "capacity": {"storage": capacity},
            "storageClassName": STORAGE_CLASS,
            "csi": {
                "driver": CSI_DRIVER,
                "volumeHandle": pv_name,
                "volumeAttributes": {
                    # pkg/ddc/alluxio/utils.go L147-L180: <MOUNT_ROOT>/alluxio/<namespace>/<name>/alluxio-fuse
                    "fluid_path": f"{mount_root}/alluxio/{namespace}/{name}/alluxio-fuse",
                    "mount_type": MOUNT_TYPE,
                    "runtime_namespace": namespace,
                    "runtime_name": name,
                },
            },
        },
    }
    selector = ((runtime.get("spec") or {}).get("fuse") or {}).get("nodeSelector") or {}
    if selector:
        expressions = [{"key": k, "operator": "In", "values": [v]} for k, v in selector.items()]
        volume["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}}
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace, "labels": labels, "annotations": ANNOTATIONS},
        "spec": {
            "volumeName": pv_name,
            "storageClassName": STORAGE_CLASS,
            "accessModes": access,
            "resources": {"requests": {"storage": capacity}},
        },
    }
    return [volume, claim]


class FluidStandIn:
    def __init__(self, kube: Kube, cluster: str, mount_root: str):
        self.kube, self.cluster, self.mount_root = kube, cluster, mount_root
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"fluid-{cluster}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.wait(2.0):
            try:
                self.reconcile()
            except Exception as exc:  # a background loop outlives one bad round
                background_error("fluid stand-in", exc)

    def reconcile(self) -> None:
        try:
            runtimes = self.kube.list(*RUNTIMES)
        except KindNotServed:
            return
        for runtime in runtimes:
            namespace, name = runtime["metadata"]["namespace"], runtime["metadata"]["name"]
            dataset = self.kube.get(*DATASETS, name, namespace)
            if dataset is None or self.kube.get("v1", "PersistentVolumeClaim", name, namespace) is not None:
                continue
            for obj in volume_objects(runtime, dataset, self.mount_root):
                meta = obj["metadata"]
                if self.kube.get("v1", obj["kind"], meta["name"], meta.get("namespace")) is None:
                    self.kube.create(obj, field_manager=MANAGER)
