"""A stand-in for what Fluid's (v1.0.8) AlluxioRuntime controller hands the pods that read a Dataset: its
PersistentVolume and PersistentVolumeClaim. Fluid's controllers are not run (their images carry Helm and the
runtime charts they install from inside), so nothing else would make the claim a model server mounts, and its
pods would wait for it. The volume is made exactly as the controller makes it once the Dataset is bound
(fluid-cloudnative/fluid@v1.0.8:pkg/utils/dataset/volume/create.go L37-L259): named `<namespace>-<name>`, the
Dataset's access modes (ReadOnlyMany when none), 100Pi unless the Dataset's annotation says otherwise, CSI driver
fuse.csi.fluid.io, and a node affinity that is the runtime's `fuse.nodeSelector` (L109-L129): so the scheduler
places a model's pods only where the cache's FUSE can run, as in a cluster. A Dataset that refers to another
(`dataset://<namespace>/<name>`: a namespace reading the cache of another) gets the volume the thin runtime's
reference engine makes: the physical one's, claimed in its own namespace (pkg/ddc/thin/referencedataset/
volume.go L70-L209). And, as the kubelet does when the Fluid CSI node plugin on a node registers, the node's
CSINode lists the driver: Volcano counts each CSI claim of a pod as a resource `attachable-volumes-csi-<driver>`
that only nodes whose CSINode lists the driver have (CSI_DRIVER_REGISTERED). It is reported as a stand-in."""

from __future__ import annotations

import json
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
REF_SCHEMA = "dataset://"  # pkg/common: RefSchema
# charts/fluid/fluid/templates/csi/daemonset.yaml: the node plugin's pods; `--nodeid=$(NODE_ID)`, spec.nodeName.
CSI_NODE_PLUGIN = "app=csi-nodeplugin-fluid"


def csi_node(node: dict[str, Any], drivers: list[str]) -> dict[str, Any]:
    """A node's CSINode as the kubelet makes it (k8s.io/kubernetes@v1.33.13:pkg/volume/csi/nodeinfomanager/
    nodeinfomanager.go L452-L484: named for the node, owned by it) with each driver installed as L536-L593 installs
    one whose NodeGetInfo gives no volume limit (no `allocatable`): Fluid's, CSI_DRIVER_REGISTERED."""
    name = node["metadata"]["name"]
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {
            "name": name,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"]}],
        },
        "spec": {"drivers": [{"name": d, "nodeID": name} for d in sorted(drivers)]},
    }


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


def referred(dataset: dict[str, Any]) -> tuple[str, str, str] | None:
    """(namespace, name, sub path) of the Dataset a reference Dataset reads (its one `dataset://` mount)."""
    mounts = (dataset.get("spec") or {}).get("mounts") or []
    refs = [m["mountPoint"] for m in mounts if str(m.get("mountPoint", "")).startswith(REF_SCHEMA)]
    if len(refs) != 1 or len(mounts) != 1:
        return None
    parts = refs[0].removeprefix(REF_SCHEMA).split("/", 2)  # pkg/ddc/base/dataset.go L53-L65
    return parts[0], parts[1], parts[2] if len(parts) == 3 else ""


def reference_objects(
    dataset: dict[str, Any], physical_volume: dict[str, Any], physical_claim: dict[str, Any]
) -> list[dict[str, Any]]:
    """The reference engine's PersistentVolume (the physical one's spec, claimed by the referring Dataset) and
    claim."""
    namespace, name = dataset["metadata"]["namespace"], dataset["metadata"]["name"]
    pv_name = f"{namespace}-{name}"
    spec = json.loads(json.dumps(physical_volume["spec"]))
    spec.pop("claimRef", None)
    _, _, sub_path = referred(dataset) or ("", "", "")
    if sub_path:
        spec["csi"]["volumeAttributes"]["fluid_sub_path"] = sub_path
    # accessModesForVirtualDataset: ReadOnlyMany when the Dataset says none or the physical volume is read-only
    access = (dataset.get("spec") or {}).get("accessModes") or []
    if not access or "ReadOnlyMany" in spec.get("accessModes", []):
        access = ["ReadOnlyMany"]
    spec["accessModes"] = access
    spec["claimRef"] = {"namespace": namespace, "name": name}
    labels = {f"fluid.io/s-{namespace}-{name}": "true", "fluid.io/dataset-id": f"{namespace}-{name}"}
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": pv_name, "labels": labels, "annotations": physical_volume["metadata"].get("annotations")},
        "spec": spec,
    }
    claim_labels = {
        **labels,
        "fluid.io/dataset.referring-name": physical_claim["metadata"]["name"],
        "fluid.io/dataset.referring-namespace": physical_claim["metadata"]["namespace"],
    }
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace, "labels": claim_labels, "annotations": ANNOTATIONS},
        "spec": {
            "volumeName": pv_name,
            "storageClassName": STORAGE_CLASS,
            "accessModes": access,
            "resources": physical_claim["spec"]["resources"],
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
        self._register_csi_driver()
        try:
            runtimes = self.kube.list(*RUNTIMES)
        except KindNotServed:
            return
        for runtime in runtimes:
            namespace, name = runtime["metadata"]["namespace"], runtime["metadata"]["name"]
            dataset = self.kube.get(*DATASETS, name, namespace)
            if dataset is None or self.kube.get("v1", "PersistentVolumeClaim", name, namespace) is not None:
                continue
            self._create(volume_objects(runtime, dataset, self.mount_root))
        for dataset in self.kube.list(*DATASETS):
            ref = referred(dataset)
            namespace, name = dataset["metadata"]["namespace"], dataset["metadata"]["name"]
            if ref is None or self.kube.get("v1", "PersistentVolumeClaim", name, namespace) is not None:
                continue
            physical_volume = self.kube.get("v1", "PersistentVolume", f"{ref[0]}-{ref[1]}")
            physical_claim = self.kube.get("v1", "PersistentVolumeClaim", ref[1], ref[0])
            if physical_volume is not None and physical_claim is not None:
                self._create(reference_objects(dataset, physical_volume, physical_claim))

    def _register_csi_driver(self) -> None:
        """The CSINode of each node where the CSI node plugin runs lists fuse.csi.fluid.io (kwok plays the
        plugin's pods; the kubelet would register the driver once the registrar reports it)."""
        running = {
            p["spec"]["nodeName"]
            for p in self.kube.list("v1", "Pod", selector=CSI_NODE_PLUGIN)
            if (p.get("status") or {}).get("phase") == "Running" and (p.get("spec") or {}).get("nodeName")
        }
        registered = {n["metadata"]["name"] for n in self.kube.list("storage.k8s.io/v1", "CSINode")}
        for node in self.kube.list("v1", "Node"):
            if node["metadata"]["name"] in running and node["metadata"]["name"] not in registered:
                self.kube.create(csi_node(node, [CSI_DRIVER]), field_manager=MANAGER)

    def _create(self, objects: list[dict[str, Any]]) -> None:
        for obj in objects:
            meta = obj["metadata"]
            if self.kube.get("v1", obj["kind"], meta["name"], meta.get("namespace")) is None:
                self.kube.create(obj, field_manager=MANAGER)
